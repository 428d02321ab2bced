// Rename, delete (plan → confirm → result) and restore on the Agents screen, through the
// lifecycle commands. The agent list reloads after each change.

import {
  commands,
  type ApiError,
  type ArchiveView,
  type LifecycleOutcome,
} from "../bindings";
import { toApiError, type AgentsStore } from "./agents.svelte";

export type LifecycleApi = Pick<
  typeof commands,
  "renameAgent" | "deleteAgent" | "listArchives" | "restoreAgent" | "checkAlias"
>;

type Ok<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

function unwrap<T>(r: Ok<T>): T {
  if (r.status === "error") throw r.error;
  return r.data;
}

/** The result of the last lifecycle action, shown until the next one. */
export interface Done {
  what: "rename" | "delete" | "restore";
  outcome: LifecycleOutcome;
}

export class LifecycleStore {
  archives = $state<ArchiveView[]>([]);
  /** The delete plan waiting for confirmation. */
  plan = $state<LifecycleOutcome | null>(null);
  done = $state<Done | null>(null);
  error = $state<ApiError | null>(null);
  busy = $state(false);

  #api: LifecycleApi;
  #agents: AgentsStore;

  constructor(agents: AgentsStore, api: LifecycleApi = commands) {
    this.#agents = agents;
    this.#api = api;
  }

  /** Why `value` cannot be the new alias of `old` (null when it can). */
  async checkNewAlias(old: string, value: string): Promise<string | null> {
    if (value === old) return "that is the current alias";
    if (this.#agents.agents.some((a) => a.alias === value)) return `agent \`${value}\` already exists`;
    return this.#agents.checkAlias(value);
  }

  async #run(what: Done["what"], f: () => Promise<Ok<LifecycleOutcome>>): Promise<boolean> {
    this.busy = true;
    this.error = null;
    this.done = null;
    try {
      this.done = { what, outcome: unwrap(await f()) };
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    } finally {
      this.busy = false;
      await Promise.all([this.#agents.load(), this.loadArchives()]);
      const open = this.#agents.selected;
      if (open !== null && !this.#agents.agents.some((a) => a.alias === open)) void this.#agents.select(null);
    }
  }

  rename(old: string, next: string): Promise<boolean> {
    return this.#run("rename", () => this.#api.renameAgent(old, next, false));
  }

  /** Asks for the delete plan (nothing changes yet). */
  async planDelete(alias: string): Promise<void> {
    this.busy = true;
    this.error = null;
    this.done = null;
    try {
      this.plan = unwrap(await this.#api.deleteAgent(alias, true));
    } catch (e) {
      this.error = toApiError(e);
    } finally {
      this.busy = false;
    }
  }

  cancelDelete(): void {
    this.plan = null;
  }

  /** Runs the delete the plan showed. */
  async confirmDelete(): Promise<void> {
    const plan = this.plan;
    if (!plan) return;
    this.plan = null;
    await this.#run("delete", () => this.#api.deleteAgent(plan.plan.alias, false));
  }

  async loadArchives(): Promise<void> {
    try {
      this.archives = unwrap(await this.#api.listArchives());
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  restore(archive: string, asAlias: string | null): Promise<boolean> {
    return this.#run("restore", () => this.#api.restoreAgent(archive, asAlias));
  }
}
