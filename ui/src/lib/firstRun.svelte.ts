// The first-run flow: connect a model in about a minute. Shown at start while the install
// records no outcome and no agent uses a route that answered a Test (the rule lives in the
// backend, `first_run`); "Skip setup" and "Finish" record the outcome in the install, and
// Settings can run it again. Steps: pick a provider (Ollama found running or not, OpenAI,
// Anthropic, or an OpenAI-compatible URL) with its key → Test → choose a model from the
// provider's own list → point the default agent (and others) at it → import from ZeroClaw
// when an install is found. Every step can be skipped.

import {
  commands,
  type AgentSummary,
  type ApiError,
  type FirstRunView,
  type OllamaStatus,
  type ProviderModelsView,
  type ProviderSummary,
  type ProviderTestView,
  type SetupOutcome,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { DEFAULT_MODEL } from "./providerEditor.svelte";
import { PointAgentsStore, type PointAgentsApi } from "./pointAgents.svelte";
import { unwrap } from "./result";

export type FirstRunApi = Pick<
  typeof commands,
  | "firstRun"
  | "finishFirstRun"
  | "detectOllama"
  | "saveProvider"
  | "testProvider"
  | "providerModels"
  | "zeroclawInstall"
> &
  PointAgentsApi;

export type Choice = "ollama" | "openai" | "anthropic" | "compatible";
export type Step = "provider" | "test" | "model" | "agents" | "import";

/** The route each choice is saved as (Ollama: the configured route at the probed address). */
export const ROUTE: Record<Exclude<Choice, "ollama">, string> = {
  openai: "openai.main",
  anthropic: "anthropic.main",
  compatible: "openai.compatible",
};

export const STEP_TITLES: Record<Step, string> = {
  provider: "Provider",
  test: "Test",
  model: "Model",
  agents: "Agents",
  import: "Import",
};

export class FirstRunStore {
  /** Whether the flow is on screen. */
  visible = $state(false);
  /** What the backend said at start (why the flow shows or not). */
  status = $state<FirstRunView | null>(null);
  step = $state<Step>("provider");
  choice = $state<Choice>("ollama");
  /** The URL typed for an OpenAI-compatible server or a remote Ollama. */
  uri = $state("");
  key = $state("");
  ollama = $state<OllamaStatus | null>(null);
  probing = $state(false);
  /** The route saved in step 1. */
  reference = $state<string | null>(null);
  busy = $state(false);
  error = $state<ApiError | null>(null);
  test = $state<ProviderTestView | null>(null);
  models = $state<ProviderModelsView | null>(null);
  /** The model chosen in step 3 (the route's current one until another is picked). */
  model = $state("");
  filter = $state("");
  /** A ZeroClaw install not imported yet was found: step 5 is offered. */
  importFound = $state(false);
  readonly pointer: PointAgentsStore;

  #api: FirstRunApi;
  /** The user picked a provider: the Ollama probe no longer changes the choice. */
  #picked = false;
  #providers: ProviderSummary[] = [];
  #agents: AgentSummary[] = [];

  constructor(api: FirstRunApi = commands) {
    this.#api = api;
    this.pointer = new PointAgentsStore(api);
  }

  /** The steps in order (import only when an install was found). */
  get steps(): Step[] {
    const s: Step[] = ["provider", "test", "model", "agents"];
    return this.importFound ? [...s, "import"] : s;
  }

  /** Asks the backend whether the flow shows at this start, and shows it if so. */
  async check(providers: ProviderSummary[], agents: AgentSummary[]): Promise<void> {
    try {
      this.status = unwrap(await this.#api.firstRun());
    } catch (e) {
      // The window works without the flow; Settings can still open it.
      this.error = toApiError(e);
      return;
    }
    if (this.status.show) await this.open(providers, agents);
  }

  /** Opens the flow at its first step ("Run setup again" too). */
  async open(providers: ProviderSummary[], agents: AgentSummary[]): Promise<void> {
    this.#providers = providers;
    this.#agents = agents;
    this.step = "provider";
    this.reference = null;
    this.error = null;
    this.test = null;
    this.models = null;
    this.model = "";
    this.key = "";
    this.filter = "";
    this.pointer.dismiss();
    this.#picked = false;
    this.probing = true;
    this.visible = true;
    void this.detectImport();
    await this.probeOllama();
    // Ollama found: it is the choice; otherwise a hosted one is more likely what is wanted.
    if (!this.#picked) this.choice = this.ollama?.running ? "ollama" : "openai";
  }

  /** The user picks a provider. */
  pick(choice: Choice): void {
    this.#picked = true;
    this.choice = choice;
  }

  async detectImport(): Promise<void> {
    try {
      const found = unwrap(await this.#api.zeroclawInstall());
      this.importFound = !!found && !found.imported;
    } catch {
      this.importFound = false;
    }
  }

  /** Looks for Ollama at the typed address, or the configured / default one. */
  async probeOllama(): Promise<void> {
    this.probing = true;
    try {
      const uri = this.choice === "ollama" && this.uri.trim() ? this.uri.trim() : null;
      this.ollama = unwrap(await this.#api.detectOllama(uri));
    } catch (e) {
      this.ollama = null;
      this.error = toApiError(e);
    } finally {
      this.probing = false;
    }
  }

  /** The route the current choice is saved as. */
  get route(): string {
    if (this.choice === "ollama") return this.ollama?.route ?? "ollama.local";
    return ROUTE[this.choice];
  }

  get needsKey(): boolean {
    return this.choice === "openai" || this.choice === "anthropic";
  }

  get needsUri(): boolean {
    return this.choice === "compatible";
  }

  /** Why step 1 cannot go on yet, in words; null when it can. */
  get providerProblem(): string | null {
    if (this.needsUri && !this.uri.trim()) return "Type the server's address, for example http://127.0.0.1:8000/v1";
    const existing = this.#providers.find((p) => p.reference === this.route);
    if (this.needsKey && !this.key.trim() && !existing?.has_key_source) return "Paste the API key";
    return null;
  }

  /** Step 1: saves the route (the key into the secret store), then goes to Test. */
  async saveProvider(): Promise<boolean> {
    if (this.providerProblem) return false;
    const reference = this.route;
    const existing = this.#providers.find((p) => p.reference === reference);
    const family = this.choice === "anthropic" ? "anthropic" : this.choice === "ollama" ? "ollama" : "openai";
    const pulled = this.ollama?.running ? this.ollama.models.map((m) => m.id) : [];
    let model: string | null = null;
    if (family === "ollama" && pulled.length && !(existing && pulled.includes(existing.model))) model = pulled[0];
    else if (!existing) model = DEFAULT_MODEL[family];
    // OpenAI and Anthropic use the vendor's address (an existing route keeps its own).
    let uri: string | null = null;
    if (this.choice === "compatible") uri = this.uri.trim();
    else if (this.choice === "ollama" && this.ollama) {
      const known = existing ? existing.uri : "http://127.0.0.1:11434";
      uri = this.ollama.uri === known.replace(/\/+$/, "") ? null : this.ollama.uri;
    }
    const key = this.choice !== "ollama" && this.key.trim() ? this.key.trim() : null;
    this.key = "";
    this.busy = true;
    this.error = null;
    try {
      const saved = unwrap(
        await this.#api.saveProvider(
          {
            reference,
            model,
            uri,
            fallbacks: null,
            timeout_secs: null,
            single_tool_control: null,
            api_key_env: null,
          },
          key,
        ),
      );
      this.reference = saved.reference;
      this.model = saved.model;
      this.test = null;
      this.models = null;
      this.step = "test";
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    } finally {
      this.busy = false;
    }
  }

  /** Step 2: one small call to the route. */
  async runTest(): Promise<void> {
    if (!this.reference) return;
    this.busy = true;
    this.error = null;
    try {
      this.test = unwrap(await this.#api.testProvider(this.reference));
    } catch (e) {
      this.error = toApiError(e);
    } finally {
      this.busy = false;
    }
  }

  /** Step 3: the provider's own model list. */
  async loadModels(): Promise<void> {
    if (!this.reference) return;
    this.busy = true;
    this.error = null;
    try {
      this.models = unwrap(await this.#api.providerModels(this.reference));
    } catch (e) {
      this.error = toApiError(e);
    } finally {
      this.busy = false;
    }
  }

  /** The listed models matching the filter. */
  get shownModels() {
    const f = this.filter.trim().toLowerCase();
    const all = this.models?.models ?? [];
    return f ? all.filter((m) => m.id.toLowerCase().includes(f)) : all;
  }

  async toModels(): Promise<void> {
    this.step = "model";
    await this.loadModels();
  }

  /** Step 3: saves the chosen model in the route, then offers the agents. */
  async useModel(): Promise<boolean> {
    const model = this.model.trim();
    if (!this.reference || !model) return false;
    this.busy = true;
    this.error = null;
    try {
      unwrap(
        await this.#api.saveProvider(
          {
            reference: this.reference,
            model,
            uri: null,
            fallbacks: null,
            timeout_secs: null,
            single_tool_control: null,
            api_key_env: null,
          },
          null,
        ),
      );
    } catch (e) {
      this.error = toApiError(e);
      return false;
    } finally {
      this.busy = false;
    }
    this.toAgents();
    return true;
  }

  /** Step 4: every agent offered, the default agent chosen. */
  toAgents(): void {
    this.step = "agents";
    this.error = null;
    if (!this.reference) return;
    this.pointer.offer(this.reference, this.#agents);
    const first = this.status?.default_agent;
    if (first && this.pointer.agents.some((a) => a.alias === first)) this.pointer.toggle(first, true);
  }

  /** The step after `step`, or null at the end. */
  next(step: Step = this.step): Step | null {
    const i = this.steps.indexOf(step);
    return i >= 0 && i + 1 < this.steps.length ? this.steps[i + 1] : null;
  }

  /** Goes on to the next step (skipping what this one would do). */
  async skipStep(): Promise<void> {
    const n = this.next();
    this.error = null;
    if (n === "test" || n === "model") {
      // Without a saved route there is nothing to test or list.
      if (!this.reference) {
        this.toAgents();
        return;
      }
    }
    if (n === "model") await this.toModels();
    else if (n === "agents") this.toAgents();
    else if (n) this.step = n;
    else await this.finish("completed");
  }

  /** Records the outcome and closes the flow. */
  async finish(outcome: SetupOutcome): Promise<boolean> {
    this.busy = true;
    try {
      this.status = unwrap(await this.#api.finishFirstRun(outcome));
      this.visible = false;
      this.error = null;
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    } finally {
      this.busy = false;
    }
  }
}
