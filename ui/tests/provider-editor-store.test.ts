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
});
