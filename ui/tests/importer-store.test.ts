import { describe, expect, it } from "vitest";
import type { Channel } from "@tauri-apps/api/core";
import type { ImportProgress, ImportReport } from "../src/bindings";
import { ImportStore, type ImportApi } from "../src/lib/importer.svelte";

function report(problems: string[], rows = 10): ImportReport {
  return {
    plan: {
      source: "/z",
      source_id: "id",
      prefix: "",
      agents: [],
      risk_profiles: [],
      runtime_profiles: [],
      providers: [],
      cron_jobs: [],
      unmapped: [],
      callouts: [],
      totals: {
        agents: 1,
        memory_rows: rows,
        markdown_entries: 0,
        workspace_files: 0,
        workspace_bytes: 0,
        secrets: 0,
        cron_jobs: 0,
      },
      problems,
    },
    dry_run: true,
    update: false,
    imported: {
      agents: 0,
      memory_rows: 0,
      memory_rows_skipped: 0,
      markdown_entries: 0,
      workspace_files: 0,
      workspace_bytes: 0,
      secrets: 0,
    },
    warnings: [],
  };
}

function api(over: Partial<ImportApi> = {}): ImportApi {
  const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
  return {
    zeroclawInstall: () => ok({ path: "/z", imported: false }),
    planZeroclawImport: () => ok(report([])),
    importZeroclaw: () => ok({ ...report([]), dry_run: false }),
    ...over,
  };
}

describe("import store", () => {
  it("takes progress only while importing, and ends with what was written", async () => {
    let finish: () => void = () => {};
    const gate = new Promise<void>((r) => (finish = r));
    let push: (p: ImportProgress) => void = () => {};
    const s = new ImportStore(
      api({
        importZeroclaw: async () => {
          await gate;
          return { status: "ok" as const, data: { ...report([]), dry_run: false } };
        },
      }),
      (onmessage) => {
        push = onmessage;
        return {} as Channel<ImportProgress>;
      },
    );
    await s.detect();
    expect(s.stage).toBe("offer");
    s.onProgress({ agent: "a", rows_done: 5, rows_total: 10, overall_done: 5, overall_total: 10 });
    expect(s.progress).toBeNull();
    await s.review();
    expect(s.ready).toBe(true);
    const running = s.run();
    expect(s.stage).toBe("importing");
    expect(s.progress).toEqual({ done: 0, total: 10, agent: "" });
    push({ agent: "writer", rows_done: 7, rows_total: 8, overall_done: 7, overall_total: 10 });
    expect(s.progress).toEqual({ done: 7, total: 10, agent: "writer" });
    finish();
    await running;
    expect(s.stage).toBe("done");
    expect(s.found?.imported).toBe(true);
  });

  it("will not import a plan with problems, and keeps a failed import's error on the plan", async () => {
    const s = new ImportStore(
      api({
        planZeroclawImport: (_p, prefix) =>
          Promise.resolve({ status: "ok" as const, data: report(prefix ? [] : ["clash"]) }),
        importZeroclaw: () =>
          Promise.resolve({ status: "error" as const, error: { code: "io", message: "disk full" } }),
      }),
      () => ({}) as Channel<ImportProgress>,
    );
    await s.detect();
    await s.review();
    expect(s.ready).toBe(false);
    await s.run();
    expect(s.stage).toBe("plan");
    s.prefix = "zc_";
    await s.review();
    expect(s.ready).toBe(true);
    await s.run();
    expect(s.stage).toBe("plan");
    expect(s.error?.message).toBe("disk full");
  });

  it("offers nothing when no install is found or it was imported", async () => {
    const none = new ImportStore(
      api({ zeroclawInstall: () => Promise.resolve({ status: "ok" as const, data: null }) }),
    );
    await none.detect();
    expect(none.stage).toBe("hidden");
    const done = new ImportStore(
      api({ zeroclawInstall: () => Promise.resolve({ status: "ok" as const, data: { path: "/z", imported: true } }) }),
    );
    await done.detect();
    expect(done.stage).toBe("hidden");
  });

  it("plans and imports with the collision choice the user made", async () => {
    const seen: (string | null)[] = [];
    const s = new ImportStore(
      api({
        planZeroclawImport: (_p, _prefix, collisions) => {
          seen.push(collisions);
          return Promise.resolve({ status: "ok" as const, data: report(collisions ? [] : ["clash"]) });
        },
        importZeroclaw: (_p, _prefix, collisions) => {
          seen.push(`import:${collisions}`);
          return Promise.resolve({ status: "ok" as const, data: { ...report([]), dry_run: false } });
        },
      }),
      () => ({}) as never,
    );
    await s.detect();
    await s.review();
    expect(s.ready).toBe(false);
    s.collisions = "rename";
    await s.review();
    expect(s.ready).toBe(true);
    await s.run();
    expect(seen).toEqual([null, "rename", "import:rename"]);
  });
});
