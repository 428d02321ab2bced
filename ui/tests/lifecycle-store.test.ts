import { describe, expect, it } from "vitest";
import type { AgentSummary, LifecycleOutcome } from "../src/bindings";
import { AgentsStore, type AgentsApi } from "../src/lib/agents.svelte";
import { LifecycleStore, type LifecycleApi } from "../src/lib/lifecycle.svelte";

const ok = <T>(data: T) => ({ status: "ok" as const, data });

function agent(alias: string): AgentSummary {
  return {
    alias,
    enabled: true,
    risk_profile: "balanced",
    runtime_profile: null,
    model_provider: null,
    memory_backend: "sqlite",
    workspace: `/w/${alias}`,
  };
}

function outcome(alias: string, dryRun: boolean): LifecycleOutcome {
  return {
    ok: true,
    dry_run: dryRun,
    plan: {
      operation: "delete",
      alias,
      new_alias: null,
      references: [],
      blockers: [],
      workspace: null,
      counts: [],
      archive: `/w/data/agents/_deleted/${alias}-x`,
      resumed: false,
    },
    warnings: dryRun ? [] : ["memory export kept in place"],
    archive: dryRun ? null : `/w/data/agents/_deleted/${alias}-x`,
  };
}

describe("the lifecycle store", () => {
  it("deletes only after the plan is confirmed, then reloads and closes a gone agent's details", async () => {
    let agents = [agent("alice"), agent("bob")];
    const calls: string[] = [];
    const agentsApi = {
      installInfo: async () => ok({ root: "/w", config_path: "/w/config.toml", created_default: false }),
      listAgents: async () => ok([...agents]),
      providers: async () => ok([]),
      newAgentChoices: async () => ok(null),
      createAgent: async () => ok(agent("x")),
      checkAlias: async () => ok(null),
      showAgent: async () =>
        ok({
          summary: agent("alice"),
          delegates: [],
          workspace_grants: [],
          memory_grants: [],
          unrestricted_filesystem: false,
          cron_jobs: [],
          referenced_by: [],
        }),
    } as unknown as AgentsApi;
    const store = new AgentsStore(agentsApi);
    await store.load();
    await store.select("alice");
    const api = {
      deleteAgent: async (alias: string, dryRun: boolean) => {
        calls.push(`delete ${alias} ${dryRun}`);
        if (!dryRun) agents = agents.filter((a) => a.alias !== alias);
        return ok(outcome(alias, dryRun));
      },
      renameAgent: async () => ok(outcome("alice", false)),
      listArchives: async () => ok([]),
      restoreAgent: async () => ok(outcome("alice", false)),
      checkAlias: async () => ok(null),
    } as unknown as LifecycleApi;
    const lc = new LifecycleStore(store, api);
    await lc.planDelete("alice");
    expect(calls).toEqual(["delete alice true"]);
    expect(lc.plan?.plan.alias).toBe("alice");
    expect(store.agents.map((a) => a.alias)).toEqual(["alice", "bob"]);
    await lc.confirmDelete();
    expect(calls).toEqual(["delete alice true", "delete alice false"]);
    expect(lc.plan).toBeNull();
    expect(lc.done?.outcome.warnings).toEqual(["memory export kept in place"]);
    expect(store.agents.map((a) => a.alias)).toEqual(["bob"]);
    expect(store.selected).toBeNull();
    expect(await lc.checkNewAlias("bob", "bob")).toBe("that is the current alias");
  });

  it("plans a rename without running it, and keeps only the newest plan", async () => {
    const calls: string[] = [];
    let release: () => void = () => {};
    const slow = new Promise<void>((r) => (release = r));
    const plan = (next: string): LifecycleOutcome => ({
      ok: true,
      dry_run: true,
      plan: {
        operation: "rename",
        alias: "alice",
        new_alias: next,
        references: [{ path: "agents.bob.delegates[0]", kind: "delegate", strength: "soft", action: "rewrite" }],
        blockers: [],
        workspace: { from: "/w/agents/alice/workspace", to: `/w/agents/${next}/workspace`, exists: true },
        counts: [],
        archive: null,
        resumed: false,
      },
      warnings: [],
      archive: null,
    });
    const api = {
      renameAgent: async (old: string, next: string, dryRun: boolean) => {
        calls.push(`rename ${old} ${next} ${dryRun}`);
        if (next === "slow") await slow;
        return ok(plan(next));
      },
    } as unknown as LifecycleApi;
    const lc = new LifecycleStore(new AgentsStore({} as AgentsApi), api);
    const first = lc.planRename("alice", "slow");
    await lc.planRename("alice", "writer");
    release();
    await first;
    expect(calls).toEqual(["rename alice slow true", "rename alice writer true"]);
    expect(lc.renamePlan?.plan.new_alias).toBe("writer");
    expect(lc.renamePlan?.plan.references.map((r) => r.path)).toEqual(["agents.bob.delegates[0]"]);
    lc.clearRenamePlan();
    expect(lc.renamePlan).toBeNull();
  });
});
