import { describe, expect, it } from "vitest";
import type { AgentSummary, FirstRunView, OllamaStatus, ProviderSummary } from "../src/bindings";
import { FirstRunStore, type FirstRunApi } from "../src/lib/firstRun.svelte";

const ok = <T>(data: T) => ({ status: "ok" as const, data });
const agent = (alias: string, model_provider: string | null): AgentSummary =>
  ({ alias, model_provider, enabled: true, risk_profile: "p" }) as unknown as AgentSummary;
const route = (reference: string, model: string, uri: string, has_key_source = false): ProviderSummary =>
  ({ reference, family: reference.split(".")[0], model, uri, has_key_source }) as ProviderSummary;

const view = (show: boolean, outcome: FirstRunView["outcome"] = null): FirstRunView => ({
  show,
  reason: "",
  outcome,
  decided_at: null,
  answered: [],
  default_agent: "assistant",
  state_path: "/i/data/first_run.json",
});

function fakeApi(ollama: OllamaStatus) {
  const calls: { name: string; args: unknown[] }[] = [];
  const rec =
    (name: string, answer: (...a: unknown[]) => unknown) =>
    async (...args: unknown[]) => {
      calls.push({ name, args });
      return answer(...args);
    };
  const api = {
    firstRun: rec("firstRun", () => ok(view(true))),
    finishFirstRun: rec("finishFirstRun", (o) => ok(view(false, o as FirstRunView["outcome"]))),
    detectOllama: rec("detectOllama", () => ok(ollama)),
    zeroclawInstall: rec("zeroclawInstall", () => ok(null)),
    saveProvider: rec("saveProvider", (input) => {
      const i = input as { reference: string; model: string | null };
      return ok({ reference: i.reference, model: i.model ?? "kept-model", key_set: true });
    }),
    testProvider: rec("testProvider", (r) => ok({ reference: r, ok: true, answer: "ok", duration_ms: 5 })),
    providerModels: rec("providerModels", (r) =>
      ok({
        reference: r,
        url: "http://x/v1/models",
        ok: true,
        models: [{ id: "m-small" }, { id: "m-large" }],
        error_code: null,
        error: null,
      }),
    ),
    saveAgentEdit: rec("saveAgentEdit", () => ok(null)),
  } as unknown as FirstRunApi;
  return { api, calls };
}

const notRunning: OllamaStatus = {
  uri: "http://127.0.0.1:11434",
  route: "ollama.local",
  running: false,
  models: [],
  message: "Ollama was not found at http://127.0.0.1:11434 — is `ollama serve` running?",
};

describe("the first-run flow", () => {
  it("opens when the backend says so, connects a hosted provider with its key, and walks every step", async () => {
    const { api, calls } = fakeApi(notRunning);
    const s = new FirstRunStore(api);
    const agents = [agent("assistant", "ollama.local"), agent("bob", null)];
    await s.check([route("ollama.local", "llama3.2", "http://127.0.0.1:11434")], agents);
    expect(s.visible).toBe(true);
    // Ollama is not running: a hosted provider is offered first, and the hint says why.
    expect(s.choice).toBe("openai");
    expect(s.ollama?.message).toContain("ollama serve");
    expect(s.providerProblem).toBe("Paste the API key");
    expect(await s.saveProvider()).toBe(false);

    s.pick("compatible");
    s.key = "sk-1";
    expect(s.providerProblem).toContain("address");
    s.uri = " http://127.0.0.1:9999/v1 ";
    expect(s.providerProblem).toBeNull();
    expect(s.route).toBe("openai.compatible");
    expect(await s.saveProvider()).toBe(true);
    const save = calls.find((c) => c.name === "saveProvider")!;
    expect(save.args[0]).toMatchObject({
      reference: "openai.compatible",
      model: "gpt-4o-mini",
      uri: "http://127.0.0.1:9999/v1",
    });
    expect(save.args[1]).toBe("sk-1");
    expect(s.key).toBe("");
    expect(s.step).toBe("test");

    await s.runTest();
    expect(s.test?.ok).toBe(true);
    await s.skipStep();
    expect(s.step).toBe("model");
    expect(s.models?.models.map((m) => m.id)).toEqual(["m-small", "m-large"]);
    s.model = "m-large";
    expect(await s.useModel()).toBe(true);
    expect(calls.filter((c) => c.name === "saveProvider")[1].args).toEqual([
      expect.objectContaining({ reference: "openai.compatible", model: "m-large", uri: null }),
      null,
    ]);
    // The default agent is chosen even though it has a provider; bob (none) too.
    expect(s.step).toBe("agents");
    expect([...s.pointer.chosen].sort()).toEqual(["assistant", "bob"]);
    await s.pointer.apply();
    expect(calls.filter((c) => c.name === "saveAgentEdit").length).toBe(2);
    expect(s.next()).toBeNull();
    await s.finish("completed");
    expect(s.visible).toBe(false);
    expect(calls.at(-1)).toEqual({ name: "finishFirstRun", args: ["completed"] });
  });

  it("uses a running Ollama's pulled model and the configured route, without a key or a URL change", async () => {
    const { api, calls } = fakeApi({
      ...notRunning,
      running: true,
      models: [{ id: "qwen2.5:7b", display_name: null, created: null, owned_by: null, size: "4.7 GB", details: null }],
      message: "Ollama is running at http://127.0.0.1:11434, 1 model",
    });
    const s = new FirstRunStore(api);
    await s.open([route("ollama.local", "llama3.2", "http://127.0.0.1:11434")], [agent("assistant", "ollama.local")]);
    expect(s.choice).toBe("ollama");
    expect(s.route).toBe("ollama.local");
    expect(s.providerProblem).toBeNull();
    await s.saveProvider();
    const save = calls.find((c) => c.name === "saveProvider")!;
    expect(save.args).toEqual([
      expect.objectContaining({ reference: "ollama.local", model: "qwen2.5:7b", uri: null }),
      null,
    ]);
  });

  it("stays closed when the install recorded an outcome, and Skip records one", async () => {
    const { api, calls } = fakeApi(notRunning);
    (api as unknown as { firstRun: () => Promise<unknown> }).firstRun = async () => ok(view(false, "skipped"));
    const s = new FirstRunStore(api);
    await s.check([], []);
    expect(s.visible).toBe(false);
    expect(calls.some((c) => c.name === "detectOllama")).toBe(false);
    await s.open([], []);
    expect(s.visible).toBe(true);
    // Skipping the provider step with nothing saved goes straight to the agents.
    await s.skipStep();
    expect(s.step).toBe("agents");
    await s.finish("skipped");
    expect(s.visible).toBe(false);
    expect(calls.at(-1)).toEqual({ name: "finishFirstRun", args: ["skipped"] });
  });

  it("offers the ZeroClaw import as a last step only when an install not imported yet is found", async () => {
    for (const [found, steps] of [
      [null, ["provider", "test", "model", "agents"]],
      [{ path: "/z", imported: true }, ["provider", "test", "model", "agents"]],
      [{ path: "/z", imported: false }, ["provider", "test", "model", "agents", "import"]],
    ] as const) {
      const { api } = fakeApi(notRunning);
      (api as unknown as { zeroclawInstall: () => Promise<unknown> }).zeroclawInstall = async () => ok(found);
      const s = new FirstRunStore(api);
      await s.open([], [agent("assistant", null)]);
      await s.detectImport();
      expect(s.steps).toEqual(steps);
      expect(s.next("agents")).toBe(steps.length === 5 ? "import" : null);
    }
  });
});
