import { describe, expect, it } from "vitest";
import type { ProfileEdit, ProfileView } from "../src/bindings";
import { FilesystemReachStore, linesOf, type FilesystemReachApi } from "../src/lib/filesystemReach.svelte";

const profile = {
  kind: "risk",
  name: "team",
  used_by: ["alice", "bob"],
  risk: { allowed_roots: ["/srv/docs"], forbidden_paths: [] },
  runtime: null,
} as unknown as ProfileView;

describe("filesystem reach", () => {
  it("edits only the lists that changed, one path per line", async () => {
    const saved: ProfileEdit[] = [];
    const api: FilesystemReachApi = {
      listProfiles: () => Promise.resolve({ status: "ok" as const, data: [profile] }),
      previewProfileEdit: () =>
        Promise.resolve({ status: "ok" as const, data: { diff: [{ kind: "add", text: "x" }], errors: [] } }),
      saveProfileEdit: (e) => {
        saved.push(e);
        return Promise.resolve({ status: "ok" as const, data: profile });
      },
    };
    const s = new FilesystemReachStore(api);
    await s.load("team");
    expect(s.usedBy).toEqual(["alice", "bob"]);
    expect(s.changed).toBe(false);
    s.roots = "/srv/docs\n\n  /srv/more  \n";
    expect(s.edit()).toEqual({
      kind: "risk",
      name: "team",
      changes: [{ field: "allowed_roots", value: ["/srv/docs", "/srv/more"] }],
    });
    await s.preview();
    expect(s.diff).toHaveLength(1);
    expect(await s.save()).toBe(true);
    expect(saved).toHaveLength(1);
    expect(linesOf(" a \n\nb")).toEqual(["a", "b"]);
  });
});
