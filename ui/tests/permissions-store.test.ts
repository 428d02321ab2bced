import { describe, expect, it } from "vitest";
import type { PermissionAspect, PermissionMap } from "../src/bindings";
import { cellMarks, PermissionsStore, type PermissionsApi } from "../src/lib/permissions.svelte";

const map: PermissionMap = {
  agents: ["alice", "bob"],
  rows: [
    {
      agent: "alice",
      sandbox: "landlock",
      cells: [
        { peer: "bob", read: true, write: false, memory: true, memory_categories: ["core", "notes"], delegate: true },
      ],
    },
    {
      agent: "bob",
      sandbox: "landlock",
      cells: [{ peer: "alice", read: false, write: false, memory: false, memory_categories: null, delegate: false }],
    },
  ],
};

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });

describe("permission cells", () => {
  it("marks workspace, memory with categories, and delegation", () => {
    expect(cellMarks(map.rows[0].cells[0])).toEqual(["R", "M[core, notes]", "D"]);
    expect(cellMarks(map.rows[1].cells[0])).toEqual([]);
    expect(
      cellMarks({ peer: "x", read: true, write: true, memory: true, memory_categories: null, delegate: false }),
    ).toEqual(["RW", "M"]);
    expect(
      cellMarks({ peer: "x", read: false, write: true, memory: false, memory_categories: null, delegate: false }),
    ).toEqual(["W"]);
  });
});

describe("permissions store", () => {
  it("loads the map, explains every aspect of a cell, and runs the path tester", async () => {
    const asked: string[] = [];
    const api = {
      permissionMap: () => ok(map),
      explainPermission: (agent: string, peer: string, aspect: PermissionAspect) => {
        asked.push(`${agent}>${peer}:${aspect}`);
        return ok({
          agent,
          peer,
          aspect,
          allowed: aspect !== "write",
          rule: aspect === "write" ? "read_only_grant" : "ok",
          path: null,
          grants: [],
          enforced_by: "x",
        });
      },
      policyCheck: (agent: string, write: boolean, path: string) =>
        ok({
          allowed: !write,
          access: write ? "write" : "read",
          path,
          rule: write ? "read_only_grant" : "granted_root",
        }),
    } as unknown as PermissionsApi;
    const s = new PermissionsStore(api);
    await s.load();
    expect(s.map?.agents).toEqual(["alice", "bob"]);
    expect(s.testAgent).toBe("alice");
    expect(s.cell("alice", "bob")?.memory_categories).toEqual(["core", "notes"]);
    expect(s.cell("alice", "alice")).toBeNull();

    await s.explain("alice", "bob");
    expect(asked).toEqual(["alice>bob:read", "alice>bob:write", "alice>bob:memory", "alice>bob:delegate"]);
    expect(s.explanations.find((x) => x.aspect === "write")?.rule).toBe("read_only_grant");

    await s.test();
    expect(s.testError?.message).toContain("path");
    s.testPath = " /w/bob/notes.md ";
    s.testWrite = true;
    await s.test();
    expect(s.testResult).toEqual({ allowed: false, access: "write", path: "/w/bob/notes.md", rule: "read_only_grant" });
  });

  it("keeps a failed load's error to show", async () => {
    const s = new PermissionsStore({
      permissionMap: () =>
        Promise.resolve({ status: "error" as const, error: { code: "invalid_config", message: "bad", details: [] } }),
    } as unknown as PermissionsApi);
    await s.load();
    expect(s.error?.code).toBe("invalid_config");
    expect(s.map).toBeNull();
  });
});

describe("permission grid", () => {
  it("is the map's text, one row per agent in column order, the diagonal marked", async () => {
    const s = new PermissionsStore({
      permissionMap: () => ok(map),
      explainPermission: () => ok([]),
      policyCheck: () => ok({ allowed: true, access: "read", path: "/", rule: "x" }),
    } as unknown as PermissionsApi);
    await s.load();
    expect(s.grid.map((r) => [r.agent, r.title, r.cells.map((c) => [c.peer, c.self, c.text])])).toEqual([
      [
        "alice",
        "sandbox: landlock",
        [
          ["alice", true, "—"],
          ["bob", false, "R M[core, notes] D"],
        ],
      ],
      [
        "bob",
        "sandbox: landlock",
        [
          ["alice", false, "·"],
          ["bob", true, "—"],
        ],
      ],
    ]);
    expect(s.grid[1].cells[0].label).toBe("bob on alice: nothing");
    expect(s.selectedKey).toBe("");
    await s.explain("alice", "bob");
    expect(s.selectedKey).toBe("alice\u0000bob");
  });
});
