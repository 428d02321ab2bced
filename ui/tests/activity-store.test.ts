import { describe, expect, it } from "vitest";
import type { LogLine, UsageDay } from "../src/bindings";
import { LogsStore, totals, UsageStore, type ActivityApi } from "../src/lib/activity.svelte";

const day = (agent: string, cost: number): UsageDay => ({
  day: "2026-01-02",
  agent,
  requests: 1,
  input_tokens: 10,
  output_tokens: 5,
  cost_usd: cost,
});

describe("usage and logs stores", () => {
  it("sums usage rows and filters them by agent", async () => {
    const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
    const api = { usageByDay: () => ok([day("a", 0.02), day("b", 0.5)]) } as unknown as ActivityApi;
    const s = new UsageStore(api);
    await s.load();
    expect(totals(s.shown)).toEqual({ requests: 2, input: 20, output: 10, cost: 0.52 });
    s.agent = "b";
    expect(s.shown.map((r) => r.agent)).toEqual(["b"]);
  });

  it("an older tail answer never replaces a newer one", async () => {
    const line = (message: string): LogLine => ({
      time: "t",
      level: "INFO",
      agent: null,
      message,
      fields: "",
      file: "f",
    });
    const answers: Array<(v: { status: "ok"; data: LogLine[] }) => void> = [];
    const api = {
      tailLogs: () => new Promise((resolve) => answers.push(resolve)),
    } as unknown as ActivityApi;
    const s = new LogsStore(api);
    const first = s.refresh();
    const second = s.refresh();
    answers[1]({ status: "ok", data: [line("new")] });
    answers[0]({ status: "ok", data: [line("old")] });
    await Promise.all([first, second]);
    expect(s.lines.map((l) => l.message)).toEqual(["new"]);
  });
});
