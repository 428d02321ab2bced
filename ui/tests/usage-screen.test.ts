import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, waitFor } from "@testing-library/svelte";
import Usage from "../src/screens/Usage.svelte";
import { UsageStore, type ActivityApi } from "../src/lib/activity.svelte";
import type { AgentsStore } from "../src/lib/agents.svelte";
import type { UsageDay } from "../src/bindings";
import { utcToday } from "../src/lib/usage";

const agents = { agents: [] } as unknown as AgentsStore;

function store(answer: { status: "ok"; data: UsageDay[] } | { status: "error"; error: unknown }): UsageStore {
  return new UsageStore({ usageByDay: () => Promise.resolve(answer) } as unknown as ActivityApi);
}

afterEach(cleanup);

describe("Usage screen", () => {
  it("says nothing was recorded instead of showing zero cards", async () => {
    render(Usage, { agents, usage: store({ status: "ok", data: [] }) });
    await screen.findByTestId("usage-empty");
    expect(screen.queryByTestId("usage-period-today")).toBeNull();
    expect(screen.queryByTestId("usage-chart")).toBeNull();
  });

  it("shows a failed read as an error, not as an empty ledger", async () => {
    render(Usage, {
      agents,
      usage: store({ status: "error", error: { code: "storage", message: "sessions.db is locked" } }),
    });
    const error = await screen.findByTestId("usage-error");
    expect(error.textContent).toContain("sessions.db is locked");
    expect(screen.queryByTestId("usage-empty")).toBeNull();
  });

  it("shows today's card and a bar for today when something ran", async () => {
    const today = utcToday();
    const row: UsageDay = { day: today, agent: "a", requests: 2, input_tokens: 10, output_tokens: 5, cost_usd: 0.5 };
    render(Usage, { agents, usage: store({ status: "ok", data: [row] }) });
    const card = await screen.findByTestId("usage-period-today");
    expect(card.textContent).toContain("$0.50");
    expect(card.textContent).toContain("2 requests · 15 tokens");
    await waitFor(() =>
      expect(document.querySelector(`[data-testid=usage-bar][data-day='${today}']`)?.getAttribute("data-value")).toBe(
        "0.5",
      ),
    );
    expect(screen.queryByTestId("usage-empty")).toBeNull();
  });
});
