// The Settings screen's memory backends (`[memory]`): the default backend and each backend's
// connection settings, a change previewed through the validator (findings, config diff), a
// connection check that opens every backend the change would use, and Save, which the backend
// refuses unless that check passes.

import {
  commands,
  type MemoryBackendKind,
  type MemoryCheckView,
  type MemorySettingsInput,
  type MemorySettingsView,
  type ProfilePreview,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { EditStore } from "./editStore.svelte";
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

export class MemoryBackendsStore extends EditStore<MemorySettingsInput, ProfilePreview, MemorySettingsView> {
  view = $state<MemorySettingsView | null>(null);
  draft = $state<MemoryDraft | null>(null);
  checks = $state<MemoryCheckView[] | null>(null);
  saved = $state(false);

  #api: MemoryBackendsApi;

  constructor(api: MemoryBackendsApi = commands) {
    super();
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

  protected editInput(): MemorySettingsInput | null {
    return this.changed ? this.input() : null;
  }

  protected sendPreview(input: MemorySettingsInput) {
    return this.#api.previewMemorySettings(input);
  }

  /** Saving: the backend checks the connections again first. */
  protected sendSave(input: MemorySettingsInput) {
    return this.#api.saveMemorySettings(input);
  }

  protected afterSave(view: MemorySettingsView): void {
    this.view = view;
    this.draft = draftOf(view);
    this.diff = [];
    this.issues = [];
    this.saved = true;
  }

  /** A new edit: an earlier check no longer applies. */
  protected edited(): void {
    this.checks = null;
    this.saved = false;
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
}
