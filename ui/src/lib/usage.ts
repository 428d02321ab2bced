// Usage rows read as a user reads them: totals of today, the week and the month, a bar for every
// day of the window, totals by agent, and money, counts and days in words. Days are the ledger's
// UTC days (`YYYY-MM-DD`).

import type { UsageDay } from "../bindings";

/** How many days the Usage screen reads back. */
export const USAGE_DAYS = 30;

/** Totals of a set of usage rows. */
export function totals(rows: UsageDay[]): { requests: number; input: number; output: number; cost: number } {
  return rows.reduce(
    (t, r) => ({
      requests: t.requests + r.requests,
      input: t.input + r.input_tokens,
      output: t.output + r.output_tokens,
      cost: t.cost + (r.cost_usd ?? 0),
    }),
    { requests: 0, input: 0, output: 0, cost: 0 },
  );
}

export type Totals = ReturnType<typeof totals>;

/** `day` (`YYYY-MM-DD`, UTC) moved by `by` days. */
export function shiftDay(day: string, by: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + by);
  return d.toISOString().slice(0, 10);
}

/** Today's UTC day, `YYYY-MM-DD`: the ledger counts days in UTC. */
export function utcToday(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** Totals of today, of the last 7 days and of the last `USAGE_DAYS` days (today included). */
export function periods(rows: UsageDay[], today: string): { today: Totals; week: Totals; month: Totals } {
  const since = (n: number) => {
    const first = shiftDay(today, -(n - 1));
    return totals(rows.filter((r) => r.day >= first && r.day <= today));
  };
  return { today: since(1), week: since(7), month: since(USAGE_DAYS) };
}

/** One bar of the daily chart: a day of the window, with nothing recorded as zeros. */
export type DayBar = { day: string } & Totals;

/** Every day of the last `days` days, oldest first, each with the totals of its rows. */
export function dailyBars(rows: UsageDay[], today: string, days: number = USAGE_DAYS): DayBar[] {
  return Array.from({ length: days }, (_, i) => {
    const day = shiftDay(today, i - (days - 1));
    return { day, ...totals(rows.filter((r) => r.day === day)) };
  });
}

/** Totals per agent, the costliest first (then by requests, then by name). */
export function byAgent(rows: UsageDay[]): Array<{ agent: string } & Totals> {
  const agents = [...new Set(rows.map((r) => r.agent))];
  return agents
    .map((agent) => ({ agent, ...totals(rows.filter((r) => r.agent === agent)) }))
    .sort((a, b) => b.cost - a.cost || b.requests - a.requests || a.agent.localeCompare(b.agent));
}

/** Dollars, with four decimals for amounts under a cent that are not zero. */
export function money(usd: number | null): string {
  const v = usd ?? 0;
  return `$${v.toFixed(v > 0 && v < 0.01 ? 4 : 2)}`;
}

/** A count with the user's digit grouping (12,345). */
export function count(n: number): string {
  return n.toLocaleString();
}

/** A UTC day as the user reads it: weekday, month and day ("Sun, Dec 6"). */
export function dayLabel(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, {
    weekday: "short",
    month: "short",
    day: "numeric",
    timeZone: "UTC",
  });
}
