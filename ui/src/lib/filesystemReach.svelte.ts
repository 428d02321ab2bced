// The filesystem reach an agent gets from its risk profile (`allowed_roots`, `forbidden_paths`),
// edited from the agent's settings: the change goes to the risk profile, which every agent
// naming it shares (they are listed), previewed through the validator and saved like a
// profile edit.

import { commands, type ApiError, type ConfigIssue, type DiffLine, type ProfileEdit } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type FilesystemReachApi = Pick<typeof commands, "listProfiles" | "previewProfileEdit" | "saveProfileEdit">;

/** One path per line, blanks dropped. */
export function linesOf(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

export class FilesystemReachStore {
  profile = $state("");
  usedBy = $state<string[]>([]);
  roots = $state("");
  forbidden = $state("");
  #saved = { roots: "", forbidden: "" };
  diff = $state<DiffLine[]>([]);
  issues = $state<ConfigIssue[]>([]);
  error = $state<ApiError | null>(null);
  saved = $state(false);
  busy = $state(false);

  #api: FilesystemReachApi;
  #seq = 0;

  constructor(api: FilesystemReachApi = commands) {
    this.#api = api;
  }

  /** Loads the reach of risk profile `profile`. */
  async load(profile: string): Promise<void> {
    this.profile = profile;
    try {
      const all = unwrap(await this.#api.listProfiles());
      const p = all.find((x) => x.kind === "risk" && x.name === profile);
      this.usedBy = p?.used_by ?? [];
      this.roots = (p?.risk?.allowed_roots ?? []).join("\n");
      this.forbidden = (p?.risk?.forbidden_paths ?? []).join("\n");
      this.#saved = { roots: this.roots, forbidden: this.forbidden };
      this.diff = [];
      this.issues = [];
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  get changed(): boolean {
    return this.roots !== this.#saved.roots || this.forbidden !== this.#saved.forbidden;
  }

  edit(): ProfileEdit {
    const changes = [];
    if (this.roots !== this.#saved.roots) changes.push({ field: "allowed_roots", value: linesOf(this.roots) });
    if (this.forbidden !== this.#saved.forbidden)
      changes.push({ field: "forbidden_paths", value: linesOf(this.forbidden) });
    return { kind: "risk", name: this.profile, changes };
  }

  async preview(): Promise<void> {
    const seq = ++this.#seq;
    this.saved = false;
    if (!this.changed) {
      this.diff = [];
      this.issues = [];
      return;
    }
    try {
      const p = unwrap(await this.#api.previewProfileEdit(this.edit()));
      if (seq !== this.#seq) return;
      this.diff = p.diff;
      this.issues = p.errors;
      this.error = null;
    } catch (e) {
      if (seq === this.#seq) this.error = toApiError(e);
    }
  }

  async save(): Promise<boolean> {
    if (!this.changed || this.issues.length) return false;
    this.busy = true;
    try {
      unwrap(await this.#api.saveProfileEdit(this.edit()));
      await this.load(this.profile);
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
