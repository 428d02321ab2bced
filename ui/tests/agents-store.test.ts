import { describe, expect, it } from "vitest";
import { flushSync } from "svelte";
import { AgentsStore, type AgentsApi, type Result } from "../src/lib/agents.svelte";
import type { AgentSummary, ApiError, CreateAgentRequest, ProviderSummary } from "../src/bindings";

const ok = <T>(data: T): Result<T, ApiError> => ({ status: "ok", data });
const fail = (code: ApiError["code"], message: string, details: string[] = []): Result<never, ApiError> => ({
  status: "error",
  error: { code, message, details },
});

function agent(alias: string, extra: Partial<AgentSummary> = {}): AgentSummary {
  return {
    alias,
    enabled: true,
    risk_profile: "balanced",
    runtime_profile: null,
    model_provider: "ollama.local",
    memory_backend: "sqlite",
    workspace: `/home/w/agents/${alias}/workspace`,
    ...extra,
  };
}

const ollama: ProviderSummary = {
  reference: "ollama.local",
  family: "ollama",
  model: "llama3.2",
  uri: "http://127.0.0.1:11434",
  has_key_source: false,
};
const openai: ProviderSummary = {
  reference: "openai.main",
  family: "openai",
  model: "gpt-4o-mini",
  uri: "https://api.openai.com/v1",
  has_key_source: true,
};

/** An in-memory backend with the same command shapes as the generated bindings. */
function fakeApi(agents: AgentSummary[], providers: ProviderSummary[]) {
  const calls: string[] = [];
  const api: AgentsApi = {
    installInfo: async () => {
      calls.push("installInfo");
      return ok({ root: "/home/w", config_path: "/home/w/config.toml", created_default: false });
    },
    listAgents: async () => {
      calls.push("listAgents");
      return ok([...agents]);
    },
    providers: async () => {
      calls.push("providers");
      return ok(providers);
    },
    createAgent: async (req: CreateAgentRequest) => {
      calls.push(`createAgent:${req.alias}`);
      if (agents.some((a) => a.alias === req.alias)) {
        return fail("already_exists", `agent \`${req.alias}\` already exists`);
      }
      const created = agent(req.alias, { risk_profile: req.risk_profile });
      agents.push(created);
      return ok(created);
    },
    showAgent: async (alias: string) => {
      calls.push(`showAgent:${alias}`);
      const a = agents.find((x) => x.alias === alias);
      if (!a) return fail("not_found", `agent \`${alias}\` does not exist`);
      return ok({
        summary: a,
        delegates: [],
        workspace_grants: [],
        memory_grants: [],
        unrestricted_filesystem: false,
        cron_jobs: [],
        referenced_by: [],
      });
    },
    newAgentChoices: async () =>
      ok({
        risk_profile: "balanced",
        runtime_profile: null,
        model_provider: null,
        memory_backend: null,
        risk_profiles: ["balanced"],
        runtime_profiles: [],
        providers: providers.map((p) => p.reference),
      }),
    checkAlias: async (alias: string) => {
      calls.push(`checkAlias:${alias}`);
      return alias.includes("__") ? fail("invalid_argument", "alias must not contain `__`") : ok(null);
    },
  };
  return { api, calls };
}

describe("AgentsStore", () => {
  it("loads agents sorted by alias, with providers and install", async () => {
    const { api } = fakeApi([agent("zed"), agent("alice"), agent("mia")], [ollama]);
    const store = new AgentsStore(api);
    expect(store.state).toBe("idle");
    await store.load();
    expect(store.state).toBe("ready");
    expect(store.agents.map((a) => a.alias)).toEqual(["alice", "mia", "zed"]);
    expect(store.install?.config_path).toBe("/home/w/config.toml");
    expect(store.error).toBeNull();
  });

  it("needs a provider when only local Ollama routes exist", async () => {
    const local = new AgentsStore(fakeApi([agent("a")], [ollama]).api);
    await local.load();
    flushSync();
    expect(local.needsProvider).toBe(true);

    const hosted = new AgentsStore(fakeApi([agent("a")], [ollama, openai]).api);
    await hosted.load();
    expect(hosted.needsProvider).toBe(false);

    const none = new AgentsStore(fakeApi([agent("a")], []).api);
    await none.load();
    expect(none.needsProvider).toBe(true);
  });

  it("keeps the backend's error with its details when loading fails", async () => {
    const { api } = fakeApi([], []);
    api.listAgents = async () =>
      fail("invalid_config", "config.toml has 2 errors", [
        "agents.x.risk_profile: unknown profile `nope`",
        "agents.y: bad",
      ]);
    const store = new AgentsStore(api);
    await store.load();
    expect(store.state).toBe("error");
    expect(store.error?.code).toBe("invalid_config");
    expect(store.error?.details).toHaveLength(2);
    expect(store.agents).toEqual([]);
    expect(store.install?.config_path).toBe("/home/w/config.toml");
  });

  it("keeps showing the list while a reload is in flight", async () => {
    const { api } = fakeApi([agent("alice")], [ollama]);
    const store = new AgentsStore(api);
    await store.load();
    const reload = store.load();
    expect(store.state).toBe("ready");
    expect(store.agents.map((a) => a.alias)).toEqual(["alice"]);
    await reload;
    expect(store.state).toBe("ready");
  });

  it("turns a thrown non-API value into an internal error", async () => {
    const { api } = fakeApi([], []);
    api.providers = async () => {
      throw new Error("ipc down");
    };
    const store = new AgentsStore(api);
    await store.load();
    expect(store.error).toEqual({ code: "internal", message: "ipc down" });
  });

  it("creates an agent and reloads; returns the error for a taken alias", async () => {
    const { api, calls } = fakeApi([agent("alice")], [ollama]);
    const store = new AgentsStore(api);
    await store.load();
    const req = {
      alias: "bob",
      risk_profile: "balanced",
      runtime_profile: null,
      model_provider: null,
      memory_backend: null,
    };
    expect(await store.create(req)).toBeNull();
    expect(store.agents.map((a) => a.alias)).toEqual(["alice", "bob"]);
    expect(calls.filter((c) => c === "listAgents")).toHaveLength(2);

    const err = await store.create({ ...req, alias: "alice" });
    expect(err?.code).toBe("already_exists");
    expect(store.agents.map((a) => a.alias)).toEqual(["alice", "bob"]);
  });

  it("reports the backend's alias message, or null when the alias is fine", async () => {
    const store = new AgentsStore(fakeApi([], []).api);
    expect(await store.checkAlias("a__b")).toBe("alias must not contain `__`");
    expect(await store.checkAlias("ok_name")).toBeNull();
  });

  it("opens an agent's detail, reports an unknown one, and closes", async () => {
    const store = new AgentsStore(fakeApi([agent("alice")], [ollama]).api);
    await store.load();
    await store.select("alice");
    expect(store.detail?.summary.workspace).toBe("/home/w/agents/alice/workspace");
    await store.select("ghost");
    expect(store.detail).toBeNull();
    expect(store.detailError?.code).toBe("not_found");
    await store.select(null);
    expect(store.selected).toBeNull();
    expect(store.detailError).toBeNull();
  });
});
