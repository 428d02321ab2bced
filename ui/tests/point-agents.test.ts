import { describe, expect, it } from "vitest";
import type { AgentSummary } from "../src/bindings";
import { PointAgentsStore, type PointAgentsApi } from "../src/lib/pointAgents.svelte";

const agent = (alias: string, model_provider: string | null): AgentSummary =>
  ({ alias, model_provider, enabled: true, risk_profile: "p" }) as unknown as AgentSummary;

describe("pointing agents at a new provider", () => {
  it("chooses the agents without a provider, sets each chosen one, and names a refusal", async () => {
    const edits: unknown[] = [];
    const api = {
      saveAgentEdit: async (edit: { alias: string }) => {
        edits.push(edit);
        if (edit.alias === "carol")
          return { status: "error" as const, error: { code: "invalid_config", message: "carol is broken" } };
        return { status: "ok" as const, data: null };
      },
    } as unknown as PointAgentsApi;
    const s = new PointAgentsStore(api);
    s.offer("openai.main", [agent("alice", null), agent("bob", "ollama.local"), agent("dan", "openai.main")]);
    expect(s.reference).toBe("openai.main");
    // dan uses it already: not offered; alice has none: chosen.
    expect(s.agents.map((a) => a.alias)).toEqual(["alice", "bob"]);
    expect(s.chosen).toEqual(["alice"]);
    s.toggle("bob", true);
    s.toggle("alice", false);
    s.toggle("alice", true);
    expect([...s.chosen].sort()).toEqual(["alice", "bob"]);
    const r = await s.apply();
    expect(r?.done.sort()).toEqual(["alice", "bob"]);
    expect(edits).toContainEqual({
      alias: "bob",
      changes: [{ kind: "set", field: "model_provider", value: "openai.main" }],
    });
    expect(s.agents).toEqual([]);

    s.offer("openai.main", [agent("carol", null)]);
    const failed = await s.apply();
    expect(failed?.failed.map((f) => [f.alias, f.error.message])).toEqual([["carol", "carol is broken"]]);
    expect(s.agents.map((a) => a.alias)).toEqual(["carol"]);

    // Nothing to offer when every agent uses the route already.
    s.offer("openai.main", [agent("dan", "openai.main")]);
    expect(s.reference).toBeNull();
  });
});
