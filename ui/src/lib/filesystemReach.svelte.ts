// The filesystem reach an agent gets from its risk profile (`allowed_roots`, `forbidden_paths`),
// edited from the agent's settings: the change goes to the risk profile, which every agent
// naming it shares (they are listed), previewed through the validator and saved like a
// profile edit.

import { commands, type ProfileEdit, type ProfilePreview, type ProfileView } from "../bindings";
import { toApiError } from "./agents.svelte";
import { EditStore } from "./editStore.svelte";
import { unwrap } from "./result";

export type FilesystemReachApi = Pick<typeof commands, "listProfiles" | "previewProfileEdit" | "saveProfileEdit">;

/** One path per line, blanks dropped. */
export function linesOf(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
}

export class FilesystemReachStore extends EditStore<ProfileEdit, ProfilePreview, ProfileView> {
  profile = $state("");
  usedBy = $state<string[]>([]);
  roots = $state("");
  forbidden = $state("");
  #saved = { roots: "", forbidden: "" };
  saved = $state(false);

  #api: FilesystemReachApi;

  constructor(api: FilesystemReachApi = commands) {
    super();
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

  protected editInput(): ProfileEdit | null {
    return this.changed ? this.edit() : null;
  }

  protected saveAllowed(): boolean {
    return this.issues.length === 0;
  }

  protected sendPreview(edit: ProfileEdit) {
    return this.#api.previewProfileEdit(edit);
  }

  protected sendSave(edit: ProfileEdit) {
    return this.#api.saveProfileEdit(edit);
  }

  protected async afterSave(): Promise<void> {
    await this.load(this.profile);
    this.saved = true;
  }

  protected edited(): void {
    this.saved = false;
  }
}
