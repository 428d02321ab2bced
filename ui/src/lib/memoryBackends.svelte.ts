// The Settings screen's memory backends (`[memory]`): the default backend and each backend's
// connection settings, a change previewed through the validator (findings, config diff), a
// connection check that opens every backend the change would use, and Save, which the backend
// refuses unless that check passes.

import {
  commands,
  type ApiError,
  type ConfigIssue,
  type DiffLine,
  type MemoryBackendKind,
  type MemoryCheckView,
  type MemorySettingsInput,
  type MemorySettingsView,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type MemoryBackendsApi = Pick<
  typeof commands,
  "memorySettings" | "previewMemorySettings" | "checkMemorySettings" | "saveMemorySettings"
>;

/** The form's fields, as typed (empty = the default). */
export interface MemoryDraft {
  backend: MemoryBackendKind;
  sqlite_path: string;
  postgres_url: string;
  postgres_schema: string;
  qdrant_url: string;
  qdrant_collection: string;
  qdrant_api_key_env: string;
  lucid_command: string;
}

const TEXT_FIELDS = [
  "sqlite_path",
  "postgres_url",
  "postgres_schema",
  "qdrant_url",
  "qdrant_collection",
  "qdrant_api_key_env",
  "lucid_command",
] as const;

function draftOf(v: MemorySettingsView): MemoryDraft {
  return {
    backend: v.backend,
    sqlite_path: v.sqlite_path ?? "",
    postgres_url: v.postgres_url ?? "",
    postgres_schema: v.postgres_schema ?? "",
    qdrant_url: v.qdrant_url ?? "",
    qdrant_collection: v.qdrant_collection ?? "",
    qdrant_api_key_env: v.qdrant_api_key_env ?? "",
    lucid_command: v.lucid_command ?? "",
  };
}

export class MemoryBackendsStore {
  view = $state<MemorySettingsView | null>(null);
  draft = $state<MemoryDraft | null>(null);
  diff = $state<DiffLine[]>([]);
  issues = $state<ConfigIssue[]>([]);
  checks = $state<MemoryCheckView[] | null>(null);
  error = $state<ApiError | null>(null);
  busy = $state(false);
  saved = $state(false);

  #api: MemoryBackendsApi;
  #seq = 0;

  constructor(api: MemoryBackendsApi = commands) {
    this.#api = api;
  }

  async load(): Promise<void> {
    try {
      this.view = unwrap(await this.#api.memorySettings());
      this.draft = draftOf(this.view);
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  /** Only what differs from the saved settings (an emptied field removes its key). */
  input(): MemorySettingsInput {
    const d = this.draft;
    const v = this.view;
    const out: MemorySettingsInput = {
      backend: null,
      sqlite_path: null,
      postgres_url: null,
      postgres_schema: null,
      qdrant_url: null,
      qdrant_collection: null,
      qdrant_api_key_env: null,
      lucid_command: null,
    };
    if (!d || !v) return out;
    if (d.backend !== v.backend) out.backend = d.backend;
    for (const f of TEXT_FIELDS) {
      if (d[f].trim() !== (v[f] ?? "")) out[f] = d[f].trim();
    }
    return out;
  }

  get changed(): boolean {
    const i = this.input();
    return Object.values(i).some((x) => x !== null);
  }

  /** Previews the draft (findings and diff); clears an earlier check, which no longer applies. */
  async preview(): Promise<void> {
    const seq = ++this.#seq;
    this.checks = null;
    this.saved = false;
    if (!this.changed) {
      this.diff = [];
      this.issues = [];
      return;
    }
    try {
      const p = unwrap(await this.#api.previewMemorySettings(this.input()));
      if (seq !== this.#seq) return;
      this.diff = p.diff;
      this.issues = p.errors;
      this.error = null;
    } catch (e) {
      if (seq === this.#seq) this.error = toApiError(e);
    }
  }

  /** Opens every backend the draft would use. */
  async check(): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      this.checks = unwrap(await this.#api.checkMemorySettings(this.input()));
    } catch (e) {
      this.error = toApiError(e);
    } finally {
      this.busy = false;
    }
  }

  get checkFailed(): boolean {
    return !!this.checks && this.checks.some((c) => !c.ok);
  }

  /** Saves the draft; the backend checks the connections again first. */
  async save(): Promise<boolean> {
    this.busy = true;
    this.error = null;
    try {
      this.view = unwrap(await this.#api.saveMemorySettings(this.input()));
      this.draft = draftOf(this.view);
      this.diff = [];
      this.issues = [];
      this.saved = true;
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    } finally {
      this.busy = false;
    }
  }
}
