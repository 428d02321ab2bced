import { describe, expect, it } from "vitest";
import type { MemorySettingsInput, MemorySettingsView } from "../src/bindings";
import { MemoryBackendsStore, type MemoryBackendsApi } from "../src/lib/memoryBackends.svelte";

const view: MemorySettingsView = {
  backend: "sqlite",
  sqlite_path: null,
  sqlite_effective_path: "/w/data/memory/memory.db",
  postgres_url: null,
  postgres_schema: null,
  qdrant_url: null,
  qdrant_collection: "mine",
  qdrant_api_key_env: null,
  lucid_command: null,
  in_use: [{ backend: "sqlite", agents: ["alice"] }],
};

function api(sent: MemorySettingsInput[], pgOpens: boolean): MemoryBackendsApi {
  const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
  return {
    memorySettings: () => ok(view),
    previewMemorySettings: (i) => ok({ diff: [{ kind: "add", text: JSON.stringify(i) }], errors: [] }),
    checkMemorySettings: (i) =>
      ok([
        { backend: "sqlite" as const, ok: true, error: null, duration_ms: 1 },
        ...(i.backend === "postgres"
          ? [
              {
                backend: "postgres" as const,
                ok: pgOpens,
                error: pgOpens ? null : "connection refused",
                duration_ms: 2,
              },
            ]
          : []),
      ]),
    saveMemorySettings: (i) => {
      sent.push(i);
      if (i.backend === "postgres" && !pgOpens)
        return Promise.resolve({
          status: "error" as const,
          error: { code: "storage" as const, message: "postgres did not open" },
        });
      return ok({ ...view, backend: i.backend ?? view.backend, postgres_url: i.postgres_url ?? null });
    },
  };
}

describe("memory backends store", () => {
  it("sends only what changed, an emptied field as empty text (the key is removed)", async () => {
    const s = new MemoryBackendsStore(api([], true));
    await s.load();
    expect(s.changed).toBe(false);
    s.draft!.backend = "postgres";
    s.draft!.postgres_url = " postgres://db/x ";
    s.draft!.qdrant_collection = "";
    expect(s.input()).toEqual({
      backend: "postgres",
      sqlite_path: null,
      postgres_url: "postgres://db/x",
      postgres_schema: null,
      qdrant_url: null,
      qdrant_collection: "",
      qdrant_api_key_env: null,
      lucid_command: null,
    });
    await s.preview();
    expect(s.diff).toHaveLength(1);
  });

  it("shows a failed check, and a refused save keeps the draft and the error", async () => {
    const sent: MemorySettingsInput[] = [];
    const s = new MemoryBackendsStore(api(sent, false));
    await s.load();
    s.draft!.backend = "postgres";
    s.draft!.postgres_url = "postgres://nowhere/x";
    await s.check();
    expect(s.checkFailed).toBe(true);
    expect(s.checks?.find((c) => c.backend === "postgres")?.error).toBe("connection refused");
    expect(await s.save()).toBe(false);
    expect(s.error?.code).toBe("storage");
    expect(s.draft?.backend).toBe("postgres");
    expect(s.view?.backend).toBe("sqlite");
    // A new edit clears the stale check.
    await s.preview();
    expect(s.checks).toBeNull();
  });
});
