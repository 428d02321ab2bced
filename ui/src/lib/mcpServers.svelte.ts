// The MCP servers page of Settings: every configured server with the agents using it; a form
// to add or change a stdio server (name, command, arguments one per line, environment rows,
// the agents that use it), previewed through the config validator (each finding beside its
// field, the config diff) before Save; Remove shows the agents that would lose the server
// before it removes anything; Test starts a server in an agent's sandbox and shows its tools
// or its error in words.

import {
  commands,
  type ApiError,
  type McpEditPreview,
  type McpField,
  type McpIssue,
  type McpServerEntry,
  type McpServerInput,
  type McpServerView,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { EditStore } from "./editStore.svelte";
import { unwrap } from "./result";

export type McpServersApi = Pick<
  typeof commands,
  "mcpOverview" | "previewMcpServer" | "saveMcpServer" | "previewRemoveMcpServer" | "removeMcpServer" | "testMcpServer"
>;

/** One environment row as typed. */
export interface EnvRow {
  name: string;
  value: string;
}

/** What the form holds. */
export interface McpDraft {
  /** True when the server exists (its name is fixed then). */
  existing: boolean;
  name: string;
  command: string;
  /** One argument per line. */
  args: string;
  env: EnvRow[];
  agents: string[];
}

/** Whether the variable `name` holds a credential by the backend's `words` (its value is
 * shown as dots). */
export function isCredential(name: string, words: string[]): boolean {
  const n = name.toUpperCase();
  return words.some((w) => n.includes(w.toUpperCase()));
}

/** The lines of `text` as arguments (blank lines dropped, spaces inside kept). */
export function argLines(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.replace(/\r$/, ""))
    .filter((l) => l.trim() !== "");
}

export class McpServersStore extends EditStore<McpServerInput, McpEditPreview, McpServerEntry, McpIssue> {
  servers = $state<McpServerEntry[]>([]);
  agents = $state<string[]>([]);
  /** The backend's words that mark a variable as a credential. */
  credentialWords = $state<string[]>([]);
  loadError = $state<ApiError | null>(null);

  draft = $state<McpDraft | null>(null);
  agentsLosing = $state<string[]>([]);
  /** A problem with the input itself (a name taken, an unknown agent, a duplicate variable). */
  inputError = $state<ApiError | null>(null);
  /** The server the last save wrote. */
  saved = $state<string | null>(null);

  /** The server whose removal is being confirmed, with what it would do. */
  removing = $state<{ name: string; preview: McpEditPreview } | null>(null);
  removeError = $state<ApiError | null>(null);
  /** The agents that lost the server removed last. */
  removed = $state<{ name: string; agents: string[] } | null>(null);

  /** The last Test of each server. */
  tests = $state<Record<string, McpServerView>>({});
  testing = $state<string | null>(null);
  /** The agent whose sandbox each server's Test uses. */
  testAgent = $state<Record<string, string>>({});

  #api: McpServersApi;

  constructor(api: McpServersApi = commands) {
    super();
    this.#api = api;
  }

  async load() {
    try {
      const o = unwrap(await this.#api.mcpOverview());
      this.servers = o.servers;
      this.agents = o.agents;
      this.credentialWords = o.credential_words;
      this.loadError = null;
    } catch (e) {
      this.loadError = toApiError(e);
    }
  }

  openNew() {
    this.draft = { existing: false, name: "", command: "", args: "", env: [], agents: [] };
    this.#reset();
  }

  openEdit(s: McpServerEntry) {
    this.draft = {
      existing: true,
      name: s.name,
      command: s.command ?? "",
      args: s.args.join("\n"),
      env: s.env.map((v) => ({ name: v.name, value: v.value })),
      agents: [...s.agents],
    };
    this.#reset();
  }

  close() {
    this.forget();
    this.draft = null;
    this.#reset();
  }

  #reset() {
    this.diff = [];
    this.issues = [];
    this.agentsLosing = [];
    this.inputError = null;
    this.error = null;
    this.saved = null;
  }

  addEnv() {
    this.draft?.env.push({ name: "", value: "" });
  }

  removeEnv(i: number) {
    this.draft?.env.splice(i, 1);
  }

  toggleAgent(alias: string, on: boolean) {
    const d = this.draft;
    if (!d) return;
    d.agents = on ? [...d.agents.filter((a) => a !== alias), alias] : d.agents.filter((a) => a !== alias);
  }

  /** The draft as the backend takes it (environment rows without a name are ignored). */
  input(): McpServerInput | null {
    const d = this.draft;
    if (!d) return null;
    return {
      name: d.name.trim(),
      command: d.command.trim(),
      args: argLines(d.args),
      env: d.env.filter((r) => r.name.trim() || r.value).map((r) => ({ name: r.name.trim(), value: r.value })),
      agents: this.agents.filter((a) => d.agents.includes(a)),
      existing: d.existing,
    };
  }

  /** Findings placed beside `field`. */
  issuesAt(field: McpField): McpIssue[] {
    return this.issues.filter((i) => i.field === field);
  }

  /** What the form catches before asking the validator. */
  get localErrors(): Partial<Record<McpField, string>> {
    const d = this.draft;
    if (!d) return {};
    const out: Partial<Record<McpField, string>> = {};
    if (!d.name.trim()) out.name = "a server needs a name";
    if (!d.command.trim()) out.command = "`command` must name a program";
    const names = d.env.map((r) => r.name.trim()).filter(Boolean);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) out.env = `\`${twice}\` is given twice`;
    else if (d.env.some((r) => !r.name.trim() && r.value)) out.env = "a value needs a variable name";
    return out;
  }

  protected editInput(): McpServerInput | null {
    return this.input();
  }

  protected sendPreview(input: McpServerInput) {
    return this.#api.previewMcpServer(input);
  }

  /** A failed preview is a problem with the input itself. */
  protected previewError(e: ApiError | null): void {
    this.inputError = e;
  }

  protected shown(p: McpEditPreview | null): void {
    this.agentsLosing = p?.agents_losing ?? [];
  }

  protected edited(): void {
    this.saved = null;
  }

  get canSave(): boolean {
    return (
      !!this.draft &&
      !this.busy &&
      !this.inputError &&
      this.issues.length === 0 &&
      this.diff.length > 0 &&
      Object.keys(this.localErrors).length === 0
    );
  }

  protected saveAllowed(): boolean {
    return this.canSave;
  }

  protected sendSave(input: McpServerInput) {
    return this.#api.saveMcpServer(input);
  }

  protected async afterSave(s: McpServerEntry): Promise<void> {
    this.saved = s.name;
    if (this.draft) this.draft = { ...this.draft, existing: true };
    this.diff = [];
    this.agentsLosing = [];
    const { [s.name]: _stale, ...rest } = this.tests;
    this.tests = rest;
    await this.load();
  }

  /** Shows what removing `name` would do (the diff, the agents losing it). */
  async askRemove(name: string) {
    this.removeError = null;
    this.removed = null;
    try {
      this.removing = { name, preview: unwrap(await this.#api.previewRemoveMcpServer(name)) };
    } catch (e) {
      this.removing = null;
      this.removeError = toApiError(e);
    }
  }

  cancelRemove() {
    this.removing = null;
  }

  /** Removes the server being confirmed. */
  async confirmRemove(): Promise<boolean> {
    const r = this.removing;
    if (!r) return false;
    try {
      const agents = unwrap(await this.#api.removeMcpServer(r.name));
      this.removing = null;
      this.removed = { name: r.name, agents };
      if (this.draft?.name === r.name) this.close();
      await this.load();
      return true;
    } catch (e) {
      this.removeError = toApiError(e);
      return false;
    }
  }

  /** The agent a server's Test starts it for: the chosen one, else its first user, else the
   * first agent. */
  agentFor(s: McpServerEntry): string {
    return this.testAgent[s.name] ?? s.agents[0] ?? this.agents[0] ?? "";
  }

  /** Starts `name` in `agent`'s sandbox and keeps its answer. */
  async test(name: string, agent: string) {
    this.testing = name;
    try {
      const v = unwrap(await this.#api.testMcpServer(agent, name));
      this.tests = { ...this.tests, [name]: v };
    } catch (e) {
      const err = toApiError(e);
      this.tests = {
        ...this.tests,
        [name]: {
          name,
          transport: "stdio",
          target: "",
          status: "failed",
          error: err.message,
          sandbox: null,
          tools: [],
        },
      };
    } finally {
      this.testing = null;
    }
  }
}
