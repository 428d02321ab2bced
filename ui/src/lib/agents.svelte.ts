// The Agents screen's state: the install, its agents and its providers, loaded through the
// typed commands. Components read the fields; only `load` and `create` change them.

import {
  commands,
  type AgentDetail,
  type AgentSummary,
  type ApiError,
  type CreateAgentRequest,
  type InstallInfo,
  type NewAgentChoices,
  type ProviderSummary,
} from "../bindings";
import { unwrap } from "./result";

/** The shape every generated command resolves to. */
export type Result<T, E> = { status: "ok"; data: T } | { status: "error"; error: E };

/** What the store is doing. */
export type LoadState = "idle" | "loading" | "ready" | "error";

/** The commands the store calls; tests and the app pass the generated `commands`. */
export type AgentsApi = Pick<
  typeof commands,
  "installInfo" | "listAgents" | "providers" | "createAgent" | "checkAlias" | "showAgent" | "newAgentChoices"
>;

/** Turns anything thrown by a command into an `ApiError`. */
export function toApiError(e: unknown): ApiError {
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    return e as ApiError;
  }
  return { code: "internal", message: e instanceof Error ? e.message : String(e) };
}

export class AgentsStore {
  install = $state<InstallInfo | null>(null);
  agents = $state<AgentSummary[]>([]);
  providers = $state<ProviderSummary[]>([]);
  /** What the create form offers and starts with (the backend's defaults, also the CLI's). */
  choices = $state<NewAgentChoices | null>(null);
  state = $state<LoadState>("idle");
  error = $state<ApiError | null>(null);

  /** The agent opened in the detail panel, and its detail once loaded. */
  selected = $state<string | null>(null);
  detail = $state<AgentDetail | null>(null);
  detailError = $state<ApiError | null>(null);

  /** True when no hosted provider is configured: only local Ollama routes (or none at all). */
  needsProvider = $derived(this.providers.every((p) => p.family === "ollama"));

  #api: AgentsApi;

  constructor(api: AgentsApi = commands) {
    this.#api = api;
  }

  /** Loads the install, the agents and the providers; on failure keeps the error to show.
   *  A reload keeps showing the current list or error until the answer arrives. */
  async load(): Promise<void> {
    // A reload after an error keeps showing it until the answer arrives (a "Check again" of a
    // broken config must not blank the panel it was clicked in).
    if (this.state !== "ready" && this.state !== "error") this.state = "loading";
    // The install is shown even when the config cannot be loaded (it names the file to fix).
    const install = this.#api.installInfo().then(unwrap);
    install.then((i) => (this.install = i)).catch(() => {});
    try {
      const [, agents, providers, choices] = await Promise.all([
        install,
        this.#api.listAgents().then(unwrap),
        this.#api.providers().then(unwrap),
        this.#api.newAgentChoices().then(unwrap),
      ]);
      this.agents = [...agents].sort((a, b) => a.alias.localeCompare(b.alias));
      this.providers = providers;
      this.choices = choices;
      this.error = null;
      this.state = "ready";
    } catch (e) {
      this.error = toApiError(e);
      this.state = "error";
    }
  }

  /** Opens an agent's detail panel (or closes it when `alias` is null). */
  async select(alias: string | null): Promise<void> {
    this.selected = alias;
    this.detail = null;
    this.detailError = null;
    if (alias === null) return;
    try {
      const detail = unwrap(await this.#api.showAgent(alias));
      if (this.selected === alias) this.detail = detail;
    } catch (e) {
      if (this.selected === alias) this.detailError = toApiError(e);
    }
  }

  /** Asks the backend whether `alias` is a valid, free alias; returns the message when not. */
  async checkAlias(alias: string): Promise<string | null> {
    try {
      const r = await this.#api.checkAlias(alias);
      return r.status === "error" ? r.error.message : null;
    } catch (e) {
      return toApiError(e).message;
    }
  }

  /** Creates an agent and reloads the list; returns the error instead of throwing. */
  async create(req: CreateAgentRequest): Promise<ApiError | null> {
    try {
      unwrap(await this.#api.createAgent(req));
    } catch (e) {
      return toApiError(e);
    }
    await this.load();
    return null;
  }
}
