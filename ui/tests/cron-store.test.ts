import { describe, expect, it } from "vitest";
import type { CronCheck, CronJobRequest, CronJobView } from "../src/bindings";
import { CronStore, type CronApi } from "../src/lib/cron.svelte";

function job(over: Partial<CronJobView> = {}): CronJobView {
  return {
    id: "rt-1",
    agent: "writer",
    schedule: "*/5 * * * *",
    prompt: "check",
    enabled: true,
    source: "runtime",
    read_only: false,
    next_runs: ["2026-01-01T00:05:00Z"],
    last_run: null,
    ...over,
  };
}

function fakeApi(saved: CronJobRequest[]): CronApi {
  const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
  const check = (schedule: string, prompt: string): CronCheck =>
    schedule.includes("25")
      ? { errors: [{ field: "schedule", message: "invalid cron expression: hour field" }], next_runs: [] }
      : {
          errors: prompt.trim() ? [] : [{ field: "prompt", message: "a cron job needs a non-empty prompt" }],
          next_runs: ["a", "b", "c", "d", "e"],
        };
  return {
    cronJobs: () => ok(saved.map((r, i) => job({ id: `rt-${i}`, schedule: r.schedule, prompt: r.prompt }))),
    checkCronJob: (req) => ok(check(req.schedule, req.prompt)),
    checkCronEdit: (_id, e) => ok(check(e.schedule ?? "", e.prompt ?? "")),
    addCronJob: (req) => {
      saved.push(req);
      return ok(job({ schedule: req.schedule }));
    },
    editCronJob: () => ok(job()),
    removeCronJob: () => ok(job()),
    runCronJob: () =>
      ok({
        id: 1,
        job: "rt-1",
        scheduled_for: "t",
        missed: 0,
        started_at: "t",
        ended_at: "t",
        status: "completed",
        turn_id: "x",
        error: null,
      }),
  };
}

describe("cron store", () => {
  it("keeps a bad schedule's error at its field and saves nothing", async () => {
    const saved: CronJobRequest[] = [];
    const s = new CronStore(fakeApi(saved));
    await s.load("writer");
    s.openNew();
    s.draft!.schedule = "* 25 * * *";
    s.draft!.prompt = "hello";
    await s.runCheck();
    expect(s.errorsFor("schedule")).toEqual(["invalid cron expression: hour field"]);
    expect(s.errorsFor("prompt")).toEqual([]);
    expect(s.canSave).toBe(false);
    expect(await s.save()).toBe(false);
    expect(saved).toHaveLength(0);
  });

  it("shows five next runs and saves a valid job for its agent", async () => {
    const saved: CronJobRequest[] = [];
    const s = new CronStore(fakeApi(saved));
    await s.load("writer");
    s.openNew();
    s.draft!.schedule = "* * * * *";
    s.draft!.prompt = "hello";
    await s.runCheck();
    expect(s.check?.next_runs).toHaveLength(5);
    expect(await s.save()).toBe(true);
    expect(saved).toEqual([{ agent: "writer", schedule: "* * * * *", prompt: "hello", enabled: true }]);
    expect(s.draft).toBeNull();
    expect(s.jobs).toHaveLength(1);
  });
});
