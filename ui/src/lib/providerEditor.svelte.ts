// The provider route form (Settings screen, and the first-start hint): add or change a
// `family.alias` route (OpenAI, Anthropic, Ollama, or any OpenAI-compatible URL as `openai` with
// its `uri`), previewed through the config validator (findings at their field, the config diff)
// before Save; the key goes to the secret store and the field is cleared once sent. Test makes
// one small call and shows the model's answer or the vendor's error in plain words.

import {
  commands,
  type ApiError,
  type ConfigIssue,
  type ProfilePreview,
  type ProviderInput,
  type ProviderKeyView,
  type ProviderModelsView,
  type ProviderTestView,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { EditStore } from "./editStore.svelte";
import { unwrap } from "./result";

export type ProviderEditorApi = Pick<
  typeof commands,
  "previewProvider" | "saveProvider" | "removeProvider" | "testProvider" | "providerModels"
>;

export type Family = "openai" | "anthropic" | "ollama";

/** What the form holds, as typed. */
export interface ProviderDraft {
  /** True when the route exists already (family and alias are fixed then). */
  existing: boolean;
  family: Family;
  alias: string;
  model: string;
  uri: string;
  /** Comma separated `family.alias` routes. */
  fallbacks: string;
  timeout: string;
  /** "" = automatic, "on", "off". */
  singleTool: "" | "on" | "off";
  apiKeyEnv: string;
  key: string;
}

/** Suggested models for a new route of each family. */
export const DEFAULT_MODEL: Record<Family, string> = {
  openai: "gpt-4o-mini",
  anthropic: "claude-3-5-haiku-latest",
  ollama: "llama3.2",
};

export class ProviderEditorStore extends EditStore<ProviderInput, ProfilePreview, ProviderKeyView> {
  draft = $state<ProviderDraft | null>(null);
  /** A problem with the input itself (bad route name, no model). */
  inputError = $state<ApiError | null>(null);
  saved = $state<ProviderKeyView | null>(null);
  /** The route the last save added (not one it changed), for the offer to point agents at it. */
  created = $state<string | null>(null);
  /** The last test per route. */
  tests = $state<Record<string, ProviderTestView>>({});
  testing = $state<string[]>([]);
  /** The models the saved route's provider offers (read on request), to pick the model from. */
  models = $state<ProviderModelsView | null>(null);
  listing = $state(false);

  #api: ProviderEditorApi;

  constructor(api: ProviderEditorApi = commands) {
    super();
    this.#api = api;
  }

  get reference(): string {
    return this.draft ? `${this.draft.family}.${this.draft.alias.trim()}` : "";
  }

  openNew(family: Family = "openai") {
    this.draft = {
      existing: false,
      family,
      alias: "main",
      model: DEFAULT_MODEL[family],
      uri: "",
      fallbacks: "",
      timeout: "",
      singleTool: "",
      apiKeyEnv: "",
      key: "",
    };
    this.#reset();
  }

  openEdit(p: ProviderKeyView) {
    const [family, ...rest] = p.reference.split(".");
    this.draft = {
      existing: true,
      family: family as Family,
      alias: rest.join("."),
      model: p.model,
      uri: "",
      fallbacks: "",
      timeout: "",
      singleTool: "",
      apiKeyEnv: p.api_key_env ?? "",
      key: "",
    };
    this.#reset();
  }

  close() {
    this.forget();
    this.draft = null;
    this.#reset();
  }

  #reset() {
    this.models = null;
    this.diff = [];
    this.issues = [];
    this.inputError = null;
    this.error = null;
    this.saved = null;
  }

  /** The route whose models can be listed: the one being edited, or the one just saved (its
   * key is in the secret store by then); null for a route not saved yet. */
  get listable(): string | null {
    if (this.saved) return this.saved.reference;
    return this.draft?.existing ? this.reference : null;
  }

  /** Reads the provider's own model list for the route (with its stored key). */
  async listModels(): Promise<void> {
    const reference = this.listable;
    if (!reference) return;
    const fresh = this.latest();
    this.listing = true;
    try {
      const view = unwrap(await this.#api.providerModels(reference));
      if (fresh()) this.models = view;
    } catch (e) {
      const err = toApiError(e);
      if (fresh()) this.models = { reference, url: "", ok: false, models: [], error_code: null, error: err.message };
    } finally {
      this.listing = false;
    }
  }

  /** Takes `model` from the listed ones as the route's model. */
  pickModel(model: string) {
    if (this.draft) this.draft.model = model;
  }

  /** The route as the backend takes it: empty fields keep their current value. */
  input(): ProviderInput | null {
    const d = this.draft;
    if (!d) return null;
    const text = (s: string) => (s.trim() ? s.trim() : null);
    const timeout = d.timeout.trim() ? Number(d.timeout.trim()) : null;
    return {
      reference: this.reference,
      model: text(d.model),
      uri: text(d.uri),
      fallbacks: d.fallbacks.trim()
        ? d.fallbacks
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : null,
      timeout_secs: timeout !== null && Number.isFinite(timeout) ? timeout : null,
      single_tool_control: d.singleTool === "" ? null : d.singleTool === "on",
      api_key_env: text(d.apiKeyEnv),
    };
  }

  /** A timeout that is not a whole number of seconds is caught here, at its field. */
  get timeoutError(): string | null {
    const t = this.draft?.timeout.trim() ?? "";
    if (!t) return null;
    const n = Number(t);
    return Number.isInteger(n) && n > 0 ? null : `timeout must be a whole number of seconds above 0, not \`${t}\``;
  }

  protected editInput(): ProviderInput | null {
    return this.input();
  }

  protected sendPreview(input: ProviderInput) {
    return this.#api.previewProvider(input);
  }

  /** A failed preview is a problem with the input itself. */
  protected previewError(e: ApiError | null): void {
    this.inputError = e;
  }

  protected edited(): void {
    this.saved = null;
  }

  /** Findings whose dotted path lies under `field` of this route. */
  issuesAt(field: string): ConfigIssue[] {
    const base = `providers.models.${this.reference}`;
    const at = `${base}.${field}`;
    return this.issues.filter((i) => i.path === at || i.path.startsWith(`${at}.`) || i.path.startsWith(`${at}[`));
  }

  get canSave(): boolean {
    return !!this.draft && !this.busy && !this.inputError && this.issues.length === 0 && !this.timeoutError;
  }

  protected saveAllowed(): boolean {
    return this.canSave;
  }

  /** Saves the route and the key, when typed (the field is cleared once sent). */
  protected sendSave(input: ProviderInput) {
    const d = this.draft;
    const key = d?.key.trim() ? d.key : null;
    if (d) d.key = "";
    return this.#api.saveProvider(input, key);
  }

  protected afterSave(saved: ProviderKeyView): void {
    this.saved = saved;
    this.created = this.draft?.existing ? null : saved.reference;
    if (this.draft) this.draft = { ...this.draft, existing: true };
    this.diff = [];
    // A test of the route as it was says nothing about it now.
    const { [this.reference]: _stale, ...rest } = this.tests;
    this.tests = rest;
  }

  /** Removes a route; the backend refuses one an agent or a fallback list uses. */
  async remove(reference: string): Promise<boolean> {
    this.error = null;
    try {
      unwrap(await this.#api.removeProvider(reference));
      if (this.reference === reference) this.close();
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    }
  }

  /** Calls the route once. */
  async test(reference: string): Promise<void> {
    this.testing = [...this.testing, reference];
    try {
      const t = unwrap(await this.#api.testProvider(reference));
      this.tests = { ...this.tests, [reference]: t };
    } catch (e) {
      const err = toApiError(e);
      this.tests = {
        ...this.tests,
        [reference]: {
          reference,
          model: "",
          url: "",
          ok: false,
          answer: null,
          error_code: null,
          error: err.message,
          duration_ms: 0,
        },
      };
    } finally {
      this.testing = this.testing.filter((r) => r !== reference);
    }
  }
}
