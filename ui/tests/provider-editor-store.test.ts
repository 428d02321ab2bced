import { describe, expect, it } from "vitest";
import type { ProviderKeyView, ProviderTestView } from "../src/bindings";
import { ProviderEditorStore, type ProviderEditorApi } from "../src/lib/providerEditor.svelte";

const route: ProviderKeyView = {
  reference: "ollama.local",
  family: "ollama",
  model: "llama3.2",
  uri: "127.0.0.1:11434",
  secret: null,
  api_key_env: null,
  key_set: false,
  store: null,
};

const failed: ProviderTestView = {
  reference: "ollama.local",
  model: "llama3.2",
  url: "127.0.0.1:11434/api/chat",
  ok: false,
  answer: null,
  error_code: "provider_unreachable",
  error: "the address has no scheme",
  duration_ms: 1,
};

describe("provider editor store", () => {
  it("drops a route's old test result once the route is saved again", async () => {
    const api: ProviderEditorApi = {
      previewProvider: () => Promise.resolve({ status: "ok" as const, data: { diff: [], issues: [] } }),
      saveProvider: () => Promise.resolve({ status: "ok" as const, data: { ...route, uri: "http://127.0.0.1:11434" } }),
      removeProvider: () => Promise.resolve({ status: "ok" as const, data: null }),
      testProvider: () => Promise.resolve({ status: "ok" as const, data: failed }),
    } as unknown as ProviderEditorApi;
    const s = new ProviderEditorStore(api);
    await s.test("ollama.local");
    expect(s.tests["ollama.local"]?.ok).toBe(false);
    // Another route's result is not touched by this save.
    s.tests = { ...s.tests, "openai.main": { ...failed, reference: "openai.main" } };
    s.openEdit(route);
    s.draft!.uri = "http://127.0.0.1:11434";
    expect(await s.save()).toBe(true);
    expect(s.tests["ollama.local"]).toBeUndefined();
    expect(s.tests["openai.main"]?.reference).toBe("openai.main");
  });

  it("lists the saved route's models on request and takes the one picked as the model", async () => {
    const asked: string[] = [];
    const api = {
      previewProvider: () => Promise.resolve({ status: "ok" as const, data: { diff: [], issues: [] } }),
      providerModels: (reference: string) => {
        asked.push(reference);
        return Promise.resolve({
          status: "ok" as const,
          data: {
            reference,
            url: "http://127.0.0.1:11434/api/tags",
            ok: true,
            models: ["llama3.2", "qwen2.5-coder"].map((id) => ({
              id,
              display_name: null,
              created: null,
              owned_by: null,
              size: null,
              details: null,
            })),
            error_code: null,
            error: null,
          },
        });
      },
    } as unknown as ProviderEditorApi;
    const s = new ProviderEditorStore(api);
    // A route not saved yet has no key stored: nothing to ask.
    s.openNew("openai");
    expect(s.listable).toBeNull();
    await s.listModels();
    expect(asked).toEqual([]);
    s.openEdit(route);
    expect(s.listable).toBe("ollama.local");
    await s.listModels();
    expect(asked).toEqual(["ollama.local"]);
    expect(s.models?.models.map((m) => m.id)).toEqual(["llama3.2", "qwen2.5-coder"]);
    s.pickModel("qwen2.5-coder");
    expect(s.draft?.model).toBe("qwen2.5-coder");
    expect(s.input()?.model).toBe("qwen2.5-coder");
    // Another route opened: the old list is not offered for it.
    s.openEdit({ ...route, reference: "ollama.other" });
    expect(s.models).toBeNull();
  });

  it("shows a refused list in words", async () => {
    const api = {
      providerModels: () =>
        Promise.resolve({
          status: "error" as const,
          error: { code: "provider_http", message: "the vendor refused the API key (HTTP 401)" },
        }),
    } as unknown as ProviderEditorApi;
    const s = new ProviderEditorStore(api);
    s.openEdit(route);
    await s.listModels();
    expect(s.models?.ok).toBe(false);
    expect(s.models?.error).toBe("the vendor refused the API key (HTTP 401)");
  });
});
