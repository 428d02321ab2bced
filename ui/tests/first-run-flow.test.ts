import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import FirstRun from "../src/components/FirstRun.svelte";
import { FirstRunStore, type FirstRunApi } from "../src/lib/firstRun.svelte";

const ok = <T>(data: T) => ({ status: "ok" as const, data });

const hostile = '<img src=x onerror="window.__pwned=1">';

function api(): FirstRunApi {
  return {
    firstRun: async () =>
      ok({
        show: true,
        reason: "",
        outcome: null,
        decided_at: null,
        answered: [],
        default_agent: "assistant",
        state_path: "",
      }),
    finishFirstRun: async () => ok(null),
    detectOllama: async () =>
      ok({
        uri: "http://127.0.0.1:11434",
        route: "ollama.local",
        running: false,
        models: [],
        message: "Ollama was not found at http://127.0.0.1:11434 — is `ollama serve` running?",
      }),
    zeroclawInstall: async () => ok(null),
    saveProvider: async (input: { reference: string; model: string | null }) =>
      ok({ reference: input.reference, model: input.model ?? "m", key_set: true }),
    testProvider: async () => ok({ ok: true, answer: "ok", duration_ms: 3 }),
    providerModels: async (reference: string) =>
      ok({
        reference,
        url: "http://x/v1/models",
        ok: true,
        models: [
          { id: hostile, display_name: null, created: null, owned_by: null, size: null, details: null },
          { id: "gpt-4.1", display_name: null, created: null, owned_by: "openai", size: null, details: null },
        ],
        error_code: null,
        error: null,
      }),
    saveAgentEdit: async () => ok(null),
  } as unknown as FirstRunApi;
}

afterEach(cleanup);

describe("the first-run dialog", () => {
  it("says when Ollama is not running, and shows a provider's model names as text", async () => {
    const store = new FirstRunStore(api());
    render(FirstRun, { store });
    await store.check([], []);
    const dialog = await screen.findByRole("dialog");
    expect(dialog.dataset.step).toBe("provider");
    // Not running: OpenAI is offered first; choosing Ollama shows why it cannot be used now.
    await fireEvent.click(screen.getByLabelText(/Ollama/, { selector: "input" }));
    await waitFor(() => expect(screen.getByTestId("first-run-ollama").textContent).toContain("ollama serve"));

    await fireEvent.click(screen.getByLabelText(/OpenAI-compatible/, { selector: "input" }));
    expect((screen.getByTestId("first-run-connect") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("first-run-uri"), { target: { value: "http://127.0.0.1:1234/v1" } });
    await fireEvent.click(screen.getByTestId("first-run-connect"));
    await waitFor(() => expect(dialog.dataset.step).toBe("test"));
    await fireEvent.click(screen.getByTestId("first-run-next"));
    await waitFor(() => expect(screen.getByTestId("first-run-models").textContent).toContain("gpt-4.1"));
    // A model name is text, never markup the webview runs.
    expect(screen.getByTestId("first-run-models").textContent).toContain(hostile);
    expect(document.querySelector("[data-testid=first-run-models] img")).toBeNull();
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
  });
});
