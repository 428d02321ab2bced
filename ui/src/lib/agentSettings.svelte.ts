// The agent settings editor in the agent's detail view: every setting of one `[agents.<alias>]`
// entry as a form, the changed ones as an edit, a preview from the backend (the real
// validator's findings, each tagged with the place of the form it belongs beside, and a diff of
// config.toml), and save. Settings the
// agent's memory backend does not allow come from the backend with the reason, shown disabled.

import {
  commands,
  type AccessMode,
  type AgentChange,
  type AgentDetail,
  type AgentEdit,
  type AgentEditPreview,
  type AgentIssue,
  type AgentSettingPlace,
  type AgentSettingsView,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { EditStore } from "./editStore.svelte";
import { unwrap } from "./result";

export type AgentSettingsApi = Pick<typeof commands, "agentSettings" | "previewAgentEdit" | "saveAgentEdit">;

/** A workspace grant on one sibling as the form shows it. */
export type GrantChoice = "none" | AccessMode;

export const GRANT_CHOICES: GrantChoice[] = ["none", "read", "write", "read_write"];

export const MEMORY_BACKENDS = ["sqlite", "postgres", "lucid", "markdown", "qdrant", "none"];

/** One sibling's memory grant: on or off, and the exact categories (comma separated; empty =
 *  every category). */
export interface MemoryChoice {
  on: boolean;
  categories: string;
}

/** The form's values. Text fields hold "" for "not set". */
export interface AgentDraft {
  risk_profile: string;
  runtime_profile: string;
  model_provider: string;
  memory_backend: string;
  enabled: boolean;
  unrestricted_filesystem: boolean;
  delegates: string[];
  grants: Record<string, GrantChoice>;
  memory: Record<string, MemoryChoice>;
}

/** The form values of an agent as the settings view describes it. */
export function draftOf(v: AgentSettingsView): AgentDraft {
  const s = v.agent.summary;
  const grants: Record<string, GrantChoice> = {};
  const memory: Record<string, MemoryChoice> = {};
  for (const peer of v.peers) {
    const g = v.agent.workspace_grants.find((x) => x.agent === peer);
    grants[peer] = g && g.access !== "memory" ? g.access : "none";
    const m = v.agent.memory_grants.find((x) => x.agent === peer);
    memory[peer] = { on: Boolean(m), categories: m?.categories ? m.categories.join(", ") : "" };
  }
  return {
    risk_profile: s.risk_profile,
    runtime_profile: s.runtime_profile ?? "",
    model_provider: s.model_provider ?? "",
    memory_backend: s.memory_backend,
    enabled: s.enabled,
    unrestricted_filesystem: v.agent.unrestricted_filesystem,
    delegates: [...v.agent.delegates],
    grants,
    memory,
  };
}

/** Category names typed as "a, b": trimmed, blanks dropped; none when nothing is left. */
export function parseCategories(text: string): string[] | null {
  const list = text
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "");
  return list.length ? list : null;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The edit that turns `original` into `draft`, field by field, in the form's order. */
export function changesOf(original: AgentDraft, draft: AgentDraft): AgentChange[] {
  const out: AgentChange[] = [];
  const text = (field: "risk_profile" | "runtime_profile" | "model_provider" | "memory_backend") => {
    const after = draft[field].trim();
    if (after === original[field]) return;
    out.push({ kind: "set", field, value: after === "" ? null : after });
  };
  // A required field left empty is sent as typed so the validator names it.
  if (draft.risk_profile.trim() !== original.risk_profile)
    out.push({ kind: "set", field: "risk_profile", value: draft.risk_profile.trim() });
  text("runtime_profile");
  text("model_provider");
  text("memory_backend");
  if (draft.enabled !== original.enabled) out.push({ kind: "set", field: "enabled", value: draft.enabled });
  if (!sameList(draft.delegates, original.delegates))
    out.push({ kind: "set", field: "delegates", value: draft.delegates.length ? [...draft.delegates] : null });
  if (draft.unrestricted_filesystem !== original.unrestricted_filesystem)
    out.push({ kind: "set", field: "unrestricted_filesystem", value: draft.unrestricted_filesystem });
  for (const [peer, access] of Object.entries(draft.grants)) {
    if (access === (original.grants[peer] ?? "none")) continue;
    out.push({ kind: "grant", peer, access: access === "none" ? null : access });
  }
  for (const [peer, m] of Object.entries(draft.memory)) {
    const before = original.memory[peer] ?? { on: false, categories: "" };
    const cats = parseCategories(m.categories);
    const beforeCats = parseCategories(before.categories);
    if (m.on === before.on && (!m.on || sameList(cats ?? [], beforeCats ?? []))) continue;
    if (!m.on) out.push({ kind: "memory_grant", peer, categories: null, remove: true });
    else out.push({ kind: "memory_grant", peer, categories: cats, remove: false });
  }
  return out;
}

/** The key of the form field beside which the backend places a finding (see `fieldKeys`), or
 *  null for a finding no field shows. */
export function keyOf(place: AgentSettingPlace | null): string | null {
  if (place === null) return null;
  switch (place.kind) {
    case "field":
      return place.field;
    case "grant":
      return `grant.${place.peer}`;
    case "memory_grants":
      return "memory";
  }
}

/** The keys of the fields the form shows findings beside (see `keyOf`). */
export function fieldKeys(peers: string[]): string[] {
  return [
    "risk_profile",
    "runtime_profile",
    "model_provider",
    "memory_backend",
    "enabled",
    "unrestricted_filesystem",
    "delegates",
    "memory",
    ...peers.map((p) => `grant.${p}`),
  ];
}

export class AgentSettingsStore extends EditStore<AgentEdit, AgentEditPreview, AgentDetail, AgentIssue> {
  alias = $state<string | null>(null);
  view = $state<AgentSettingsView | null>(null);
  original = $state<AgentDraft | null>(null);
  draft = $state<AgentDraft | null>(null);
  saved = $state(false);

  changes = $derived(this.original && this.draft ? changesOf(this.original, this.draft) : []);
  /** Save is offered only for a change the validator accepts (its findings show beside their
   *  fields until they are fixed). */
  canSave = $derived(this.changes.length > 0 && this.issues.length === 0 && !this.busy);
  /** Findings no form field shows beside itself (listed once under the form). */
  otherIssues = $derived(
    this.alias && this.view
      ? this.issues.filter((i) => !fieldKeys(this.view?.peers ?? []).includes(keyOf(i.place) ?? ""))
      : [],
  );

  #api: AgentSettingsApi;

  constructor(api: AgentSettingsApi = commands) {
    super();
    this.#api = api;
  }

  /** Loads `alias`'s settings into the form (dropping any unsaved change). */
  async open(alias: string): Promise<void> {
    this.alias = alias;
    this.diff = [];
    this.issues = [];
    this.error = null;
    this.saved = false;
    this.forget();
    try {
      const v = unwrap(await this.#api.agentSettings(alias));
      if (this.alias !== alias) return;
      this.view = v;
      this.original = draftOf(v);
      this.draft = draftOf(v);
    } catch (e) {
      if (this.alias !== alias) return;
      this.view = null;
      this.original = null;
      this.draft = null;
      this.error = toApiError(e);
    }
  }

  /** The form's changes as the edit to preview and save (none while nothing changed). */
  protected editInput(): AgentEdit | null {
    const alias = this.alias;
    const changes = this.changes;
    return alias && changes.length > 0 ? { alias, changes } : null;
  }

  protected sendPreview(edit: AgentEdit) {
    return this.#api.previewAgentEdit(edit);
  }

  protected sendSave(edit: AgentEdit) {
    return this.#api.saveAgentEdit(edit);
  }

  /** Reloads the form from the saved file. */
  protected async afterSave(_agent: AgentDetail, edit: AgentEdit): Promise<void> {
    await this.open(edit.alias);
    this.saved = true;
  }

  protected edited(): void {
    this.saved = false;
  }

  /** The validator's findings the backend placed beside one form field (see `keyOf`). */
  issuesFor(key: string): AgentIssue[] {
    if (this.alias === null) return [];
    return this.issues.filter((i) => keyOf(i.place) === key);
  }

  /** Why `setting` is disabled for this agent (`memory_grant.<peer>`,
   *  `memory_categories.<peer>`), or null when it is not. The agent-wide `memory_categories`
   *  entry disables the categories of every peer. */
  disabledReason(setting: string): string | null {
    const d = this.view?.disabled ?? [];
    const exact = d.find((x) => x.setting === setting);
    if (exact) return exact.reason;
    if (setting.startsWith("memory_categories.")) {
      const all = d.find((x) => x.setting === "memory_categories");
      if (all) return all.reason;
    }
    return null;
  }
}
