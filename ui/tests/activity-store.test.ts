import { describe, expect, it } from "vitest";
import type { LogLine, UsageDay } from "../src/bindings";
import { LogsStore, UsageStore, type ActivityApi } from "../src/lib/activity.svelte";
import { byAgent, dailyBars, money, periods, shiftDay, totals, utcToday } from "../src/lib/usage";

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

  it("sums today, the last 7 and the last 30 UTC days, and leaves older rows out", () => {
    const at = (d: string, agent: string, cost: number, requests = 1): UsageDay => ({
      ...day(agent, cost),
      day: d,
      requests,
    });
    const rows = [
      at("2026-12-06", "a", 0.5, 2),
      at("2026-12-06", "b", 0.25),
      at("2026-11-30", "a", 1), // 7th day back: in the week
      at("2026-11-29", "a", 2), // 8th day back: not in it
      at("2026-11-07", "b", 4), // 30th day back: in the month
      at("2026-11-06", "b", 8), // 31st: in neither
    ];
    const p = periods(rows, "2026-12-06");
    expect(p.today).toEqual({ requests: 3, input: 20, output: 10, cost: 0.75 });
    expect(p.week.cost).toBe(1.75);
    expect(p.month.cost).toBe(7.75);
    expect(p.month.requests).toBe(6);
  });

  it("a bar for every day of the window, across a month and a year, zeros where nothing ran", () => {
    expect(shiftDay("2026-01-01", -1)).toBe("2025-12-31");
    expect(shiftDay("2024-02-28", 1)).toBe("2024-02-29");
    expect(utcToday(new Date("2026-12-06T23:59:59-05:00"))).toBe("2026-12-07");
    const bars = dailyBars([{ ...day("a", 0.3), day: "2026-01-01" }], "2026-01-02", 30);
    expect(bars).toHaveLength(30);
    expect(bars[0].day).toBe("2025-12-04");
    expect(bars[29].day).toBe("2026-01-02");
    expect(bars[28]).toEqual({ day: "2026-01-01", requests: 1, input: 10, output: 5, cost: 0.3 });
    expect(bars.filter((b) => b.requests === 0)).toHaveLength(29);
  });

  it("totals by agent, the costliest first; money shows sub-cent amounts", () => {
    const rows = [day("cheap", 0.01), day("dear", 0.5), day("cheap", 0.01), day("free", 0)];
    expect(byAgent(rows).map((a) => [a.agent, a.requests, a.cost])).toEqual([
      ["dear", 1, 0.5],
      ["cheap", 2, 0.02],
      ["free", 1, 0],
    ]);
    expect(money(0.004)).toBe("$0.0040");
    expect(money(0)).toBe("$0.00");
    expect(money(null)).toBe("$0.00");
    expect(money(12.5)).toBe("$12.50");
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
