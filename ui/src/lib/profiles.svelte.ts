// The Profiles screen: every field of risk and runtime profiles (rules §1.1) as a form, the
// changed fields as an edit, a preview from the backend (the real validator's findings and a
// diff of config.toml), save and delete.

import {
  commands,
  type ApiError,
  type ConfigIssue,
  type FieldChange,
  type FieldValue,
  type ProfileEdit,
  type ProfileKind,
  type ProfilePreview,
  type ProfileView,
  type RemovedProfile,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { EditStore } from "./editStore.svelte";
import { unwrap } from "./result";

export type ProfilesApi = Pick<
  typeof commands,
  "listProfiles" | "previewProfileEdit" | "saveProfileEdit" | "deleteProfile" | "createProfile" | "restoreProfile"
>;

/** A profile named in the list (for confirmations and errors shown beside it). */
export interface ProfileRef {
  kind: ProfileKind;
  name: string;
}

export type FieldType = "bool" | "number" | "optional_number" | "list" | "network" | { options: string[] };

export interface FieldSpec {
  key: string;
  label: string;
  type: FieldType;
  help: string;
}

export const RISK_FIELDS: FieldSpec[] = [
  {
    key: "level",
    label: "Autonomy level",
    type: { options: ["readonly", "supervised", "full"] },
    help: "readonly: no side effects; supervised: asks; full: never asks",
  },
  {
    key: "workspace_only",
    label: "Workspace only",
    type: "bool",
    help: "confine file access to the workspace and grants",
  },
  {
    key: "allowed_commands",
    label: "Allowed commands",
    type: "list",
    help: "commands the shell tool may run, one per line (* = any)",
  },
  { key: "forbidden_paths", label: "Forbidden paths", type: "list", help: "always denied (~ expanded)" },
  { key: "allowed_roots", label: "Allowed roots", type: "list", help: "extra read-write roots" },
  { key: "require_approval_for_medium_risk", label: "Ask for medium-risk commands", type: "bool", help: "" },
  { key: "block_high_risk_commands", label: "Block high-risk commands", type: "bool", help: "" },
  { key: "auto_approve", label: "Auto-approve tools", type: "list", help: "tools that never ask" },
  {
    key: "always_ask",
    label: "Always ask tools",
    type: "list",
    help: "tools that always ask (wins over auto-approve)",
  },
  { key: "allowed_tools", label: "Allowed tools", type: "list", help: "tools offered to the model (empty = all)" },
  { key: "excluded_tools", label: "Excluded tools", type: "list", help: "tools never offered" },
  {
    key: "sandbox",
    label: "Sandbox",
    type: { options: ["auto", "landlock", "bubblewrap", "none"] },
    help: "OS confinement of child processes",
  },
  {
    key: "shell_env_passthrough",
    label: "Shell environment passthrough",
    type: "list",
    help: "variable names passed to shell commands",
  },
  {
    key: "delegation",
    label: "Delegation",
    type: { options: ["forbidden", "allow"] },
    help: "whether the delegate tool may be used",
  },
  {
    key: "network",
    label: "Network",
    type: "network",
    help: "what sandboxed commands (shell, git, MCP servers) may reach",
  },
];

/** A risk profile's `network` as the form holds it: the choice and, for "By domain", its
 *  parts (kept while another choice is picked, so going back finds them again). */
export type NetworkMode = "off" | "on" | "domains";
export const NETWORK_MODES: { mode: NetworkMode; label: string; help: string }[] = [
  { mode: "off", label: "Off", help: "no network: the sandbox has none" },
  { mode: "on", label: "On (the host's network)", help: "unfiltered and not recorded" },
  {
    mode: "domains",
    label: "By domain",
    help: "only the domains listed, through Warren's proxy; every connection is recorded (Network screen)",
  },
];
/** The draft keys of the "By domain" parts, each shown as a field of its own. */
export const NETWORK_PARTS = {
  allow: "network.allow",
  deny: "network.deny",
  allowPrivate: "network.allow_private",
} as const;

/** The value a draft's network choice stands for: what is sent and compared. */
export function networkValue(d: Draft): FieldValue {
  const mode = d.network;
  if (mode === "on") return true;
  if (mode !== "domains") return false;
  return {
    allow: lines(String(d[NETWORK_PARTS.allow] ?? "")),
    deny: lines(String(d[NETWORK_PARTS.deny] ?? "")),
    allow_private: Boolean(d[NETWORK_PARTS.allowPrivate]),
  };
}

/** One item a line, blank lines dropped. */
function lines(text: string): string[] {
  return text
    .split("\n")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export const RUNTIME_FIELDS: FieldSpec[] = [
  { key: "max_tool_iterations", label: "Max tool rounds per turn", type: "number", help: "" },
  { key: "parallel_tools", label: "Parallel tools", type: "bool", help: "run an admitted batch concurrently" },
  {
    key: "single_tool_rounds",
    label: "Single-tool rounds",
    type: "bool",
    help: "at most one tool call per provider response",
  },
  { key: "max_actions_per_hour", label: "Max actions per hour", type: "number", help: "0 = no side-effecting actions" },
  {
    key: "max_cost_per_day_cents",
    label: "Max cost per day (cents)",
    type: "number",
    help: "enforced before every provider call",
  },
  { key: "shell_timeout_secs", label: "Shell timeout (s)", type: "number", help: "" },
  { key: "turn_timeout_secs", label: "Turn timeout (s)", type: "number", help: "" },
  { key: "max_delegation_depth", label: "Max delegation depth", type: "number", help: "" },
  { key: "max_context_tokens", label: "Max context tokens", type: "optional_number", help: "empty = no cap" },
];

export type Draft = Record<string, string | boolean>;

export function fieldsOf(kind: ProfileKind): FieldSpec[] {
  return kind === "risk" ? RISK_FIELDS : RUNTIME_FIELDS;
}

/** The form values of a profile: text for numbers and lists (one item a line). */
export function draftOf(p: ProfileView): Draft {
  const values = (p.risk ?? p.runtime ?? {}) as Record<string, unknown>;
  const d: Draft = {};
  for (const f of fieldsOf(p.kind)) {
    const v = values[f.key];
    if (f.type === "bool") d[f.key] = Boolean(v);
    else if (f.type === "list") d[f.key] = Array.isArray(v) ? v.join("\n") : "";
    else if (f.type === "network") {
      const rules =
        typeof v === "object" && v !== null
          ? (v as { allow?: string[]; deny?: string[]; allow_private?: boolean })
          : null;
      d[f.key] = rules ? "domains" : v ? "on" : "off";
      d[NETWORK_PARTS.allow] = (rules?.allow ?? []).join("\n");
      d[NETWORK_PARTS.deny] = (rules?.deny ?? []).join("\n");
      d[NETWORK_PARTS.allowPrivate] = rules?.allow_private ?? false;
    } else d[f.key] = v === null || v === undefined ? "" : String(v);
  }
  return d;
}

/** The fields of `draft` that differ from `original`, as the edit to send. A number field that
 *  does not hold a number is sent as typed, so the validator names the problem. */
export function changesOf(kind: ProfileKind, original: Draft, draft: Draft): FieldChange[] {
  const out: FieldChange[] = [];
  for (const f of fieldsOf(kind)) {
    if (f.type === "network") {
      // The parts of "By domain" count only while it is chosen; what is compared is the value.
      const value = networkValue(draft);
      if (JSON.stringify(networkValue(original)) !== JSON.stringify(value)) out.push({ field: f.key, value });
      continue;
    }
    const before = original[f.key];
    const after = draft[f.key];
    if (before === after) continue;
    if (f.type === "bool") out.push({ field: f.key, value: Boolean(after) });
    else if (f.type === "list") out.push({ field: f.key, value: lines(String(after)) });
    else if (f.type === "number" || f.type === "optional_number") {
      const text = String(after).trim();
      if (text === "" && f.type === "optional_number") out.push({ field: f.key, value: null });
      else out.push({ field: f.key, value: /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text });
    } else out.push({ field: f.key, value: String(after) });
  }
  return out;
}

/** What is wrong with a number field's text, in words, or null when it is fine. Checked in the
 *  form before anything is sent; the validator judges the ranges. */
export function numberProblem(f: FieldSpec, text: string): string | null {
  if (f.type !== "number" && f.type !== "optional_number") return null;
  const t = text.trim();
  if (t === "") return f.type === "optional_number" ? null : "Enter a whole number (0 or more).";
  return /^\d+$/.test(t) ? null : "Enter a whole number (0 or more), digits only.";
}

export class ProfilesStore extends EditStore<ProfileEdit, ProfilePreview, ProfileView> {
  profiles = $state<ProfileView[]>([]);
  selected = $state<{ kind: ProfileKind; name: string } | null>(null);
  original = $state<Draft>({});
  draft = $state<Draft>({});
  saved = $state<string | null>(null);
  /** The profile whose Delete was clicked and waits for its confirmation. */
  confirming = $state<ProfileRef | null>(null);
  /** Why deleting a profile was refused, shown beside that profile in the list. */
  deleteError = $state<(ProfileRef & { error: ApiError }) | null>(null);
  /** The profile deleted last, until it is undone or another action replaces the notice. */
  removed = $state<RemovedProfile | null>(null);
  /** A profile asked for while the open one has unsaved changes (the screen asks first). */
  switching = $state<ProfileRef | null>(null);

  current = $derived(
    this.selected
      ? (this.profiles.find((p) => p.kind === this.selected?.kind && p.name === this.selected?.name) ?? null)
      : null,
  );
  changes = $derived(this.selected ? changesOf(this.selected.kind, this.original, this.draft) : []);
  /** Problems the form itself sees (a number field that holds no number), by field key. */
  localProblems = $derived(
    this.selected
      ? Object.fromEntries(
          fieldsOf(this.selected.kind)
            .map((f) => [f.key, numberProblem(f, String(this.draft[f.key] ?? ""))] as const)
            .filter(([, m]) => m !== null),
        )
      : {},
  );
  /** Save is offered only for a change that the form and the validator accept. */
  canSave = $derived(
    this.changes.length > 0 && !this.busy && this.issues.length === 0 && Object.keys(this.localProblems).length === 0,
  );
  /** The validator's findings that no field shows beside itself. */
  otherIssues = $derived(
    this.selected ? this.issues.filter((i) => !fieldsOf(this.selected!.kind).some((f) => this.#on(i, f.key))) : [],
  );

  #api: ProfilesApi;

  constructor(api: ProfilesApi = commands) {
    super();
    this.#api = api;
  }

  /** Whether `error` came from loading the list (a later good load clears only that). */
  #loadFailed = false;

  /** Reloads the list. Also runs when the config changed on disk (our own save included), so it
   *  never clears an error a save or delete is showing: only a failed load's own error. */
  async load(): Promise<void> {
    try {
      this.profiles = unwrap(await this.#api.listProfiles());
      if (this.#loadFailed) this.error = null;
      this.#loadFailed = false;
    } catch (e) {
      this.error = toApiError(e);
      this.#loadFailed = true;
    }
  }

  /** Opens a profile; with unsaved changes to the open one, asks first (see `switching`)
   *  unless `discard`. */
  open(kind: ProfileKind, name: string, discard = false): void {
    const p = this.profiles.find((x) => x.kind === kind && x.name === name);
    if (!p) return;
    const same = this.selected?.kind === kind && this.selected?.name === name;
    if (!discard && !same && this.changes.length > 0) {
      this.switching = { kind, name };
      return;
    }
    this.switching = null;
    // A preview still on its way is of the profile open before.
    this.forget();
    this.selected = { kind, name };
    this.original = draftOf(p);
    this.draft = draftOf(p);
    this.diff = [];
    this.issues = [];
    this.error = null;
    this.saved = null;
  }

  /** The changed fields of the open profile as the edit to preview and save; none while a
   *  number field holds no number (the form says so beside it, nothing is sent). */
  protected editInput(): ProfileEdit | null {
    const sel = this.selected;
    if (!sel || this.changes.length === 0 || Object.keys(this.localProblems).length > 0) return null;
    return { kind: sel.kind, name: sel.name, changes: this.changes };
  }

  protected sendPreview(edit: ProfileEdit) {
    return this.#api.previewProfileEdit(edit);
  }

  protected sendSave(edit: ProfileEdit) {
    return this.#api.saveProfileEdit(edit);
  }

  /** Reloads the list and opens the saved profile again, as saved. */
  protected async afterSave(_view: ProfileView, edit: ProfileEdit): Promise<void> {
    await this.load();
    this.open(edit.kind, edit.name);
    this.saved = edit.name;
  }

  /** The validator's findings on one field of the selected profile (a finding on one of the
   *  network's parts, `network.allow[1]`, shows beside that part, not beside the choice). */
  issuesFor(key: string): ConfigIssue[] {
    const parts: string[] =
      key === "network" ? [NETWORK_PARTS.allow, NETWORK_PARTS.deny, NETWORK_PARTS.allowPrivate] : [];
    return this.issues.filter((i) => this.#on(i, key) && !parts.some((p) => this.#on(i, p)));
  }

  /** The messages shown beside one field: the form's own problem, else the validator's. */
  messagesFor(key: string): string[] {
    const local = this.localProblems[key];
    return local ? [local] : this.issuesFor(key).map((i) => i.message);
  }

  #on(i: ConfigIssue, key: string): boolean {
    const sel = this.selected;
    if (!sel) return false;
    const prefix = `${sel.kind === "risk" ? "risk_profiles" : "runtime_profiles"}.${sel.name}.${key}`;
    return i.path === prefix || i.path.startsWith(`${prefix}.`) || i.path.startsWith(`${prefix}[`);
  }

  /** Adds a profile with default values and opens it. */
  async create(kind: ProfileKind, name: string): Promise<boolean> {
    try {
      unwrap(await this.#api.createProfile(kind, name));
      this.error = null;
      await this.load();
      this.open(kind, name);
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    }
  }

  /** Deletes a profile once its deletion was confirmed (`confirming`); the notice offers Undo.
   *  A refusal is shown beside the profile, not in the editor of another one. */
  async remove(kind: ProfileKind, name: string): Promise<void> {
    this.confirming = null;
    this.deleteError = null;
    this.error = null;
    try {
      this.removed = unwrap(await this.#api.deleteProfile(kind, name));
      if (this.selected?.kind === kind && this.selected.name === name) this.selected = null;
      await this.load();
    } catch (e) {
      this.deleteError = { kind, name, error: toApiError(e) };
    }
  }

  /** Puts back the profile deleted last, as it was (comments too), and opens it. */
  async undoRemove(): Promise<void> {
    const r = this.removed;
    if (!r) return;
    try {
      unwrap(await this.#api.restoreProfile(r));
      this.removed = null;
      await this.load();
      this.open(r.kind, r.name, true);
    } catch (e) {
      this.deleteError = { kind: r.kind, name: r.name, error: toApiError(e) };
    }
  }
}
