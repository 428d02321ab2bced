// Rename, delete (plan → confirm → result) and restore on the Agents screen, through the
// lifecycle commands. The agent list reloads after each change.

import {
  commands,
  type ApiError,
  type ArchiveView,
  type LifecycleOutcome,
  type PendingOperationView,
} from "../bindings";
import { toApiError, type AgentsStore } from "./agents.svelte";
import { unwrap, type Ok } from "./result";

export type LifecycleApi = Pick<
  typeof commands,
  | "renameAgent"
  | "deleteAgent"
  | "listArchives"
  | "restoreAgent"
  | "checkAlias"
  | "pendingOperations"
  | "resumeOperations"
>;

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
  /** Unfinished renames, deletes and restores (their aliases refuse turns until finished). */
  pending = $state<PendingOperationView[]>([]);
  /** Why the last Resume failed (null after one that finished everything). */
  resumeError = $state<string | null>(null);
  resuming = $state(false);

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
      await Promise.all([this.#agents.load(), this.loadArchives(), this.loadPending()]);
      const open = this.#agents.selected;
      if (open !== null && !this.#agents.agents.some((a) => a.alias === open)) void this.#agents.select(null);
    }
  }

  /**
   * The rename plan of `old` → `next` (nothing changes): references rewritten, the workspace
   * move, the owned state that moves with it, and what blocks it. Null when the backend refused
   * to plan; the error is in `renamePlanError` then.
   */
  renamePlan = $state<LifecycleOutcome | null>(null);
  renamePlanError = $state<ApiError | null>(null);
  #planSeq = 0;

  async planRename(old: string, next: string): Promise<void> {
    const seq = ++this.#planSeq;
    try {
      const plan = unwrap(await this.#api.renameAgent(old, next, true));
      if (seq !== this.#planSeq) return;
      this.renamePlan = plan;
      this.renamePlanError = null;
    } catch (e) {
      if (seq !== this.#planSeq) return;
      this.renamePlan = null;
      this.renamePlanError = toApiError(e);
    }
  }

  clearRenamePlan(): void {
    ++this.#planSeq;
    this.renamePlan = null;
    this.renamePlanError = null;
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

  /** The restore plan shown before a restore runs (nothing changes yet), with what it was
   *  asked for. */
  restorePlan = $state<{ archive: string; asAlias: string | null; outcome: LifecycleOutcome } | null>(null);

  /** Asks for the restore plan of `archive` (as `asAlias` when given); nothing changes. */
  async planRestore(archive: string, asAlias: string | null): Promise<void> {
    this.busy = true;
    this.error = null;
    this.done = null;
    this.restorePlan = null;
    try {
      const outcome = unwrap(await this.#api.restoreAgent(archive, asAlias, true));
      this.restorePlan = { archive, asAlias, outcome };
    } catch (e) {
      this.error = toApiError(e);
    } finally {
      this.busy = false;
    }
  }

  cancelRestore(): void {
    this.restorePlan = null;
  }

  /** Runs the restore the plan showed. */
  async confirmRestore(): Promise<boolean> {
    const p = this.restorePlan;
    if (!p) return false;
    this.restorePlan = null;
    return this.restore(p.archive, p.asAlias);
  }

  restore(archive: string, asAlias: string | null): Promise<boolean> {
    return this.#run("restore", () => this.#api.restoreAgent(archive, asAlias, false));
  }

  /** Reloads the unfinished operations; a failure to list them shows as the resume error. */
  async loadPending(): Promise<void> {
    try {
      this.pending = unwrap(await this.#api.pendingOperations());
    } catch (e) {
      this.resumeError = toApiError(e).message;
    }
  }

  /**
   * Tries again to finish every unfinished operation, then reloads the agents, the archives and
   * the list. What still fails stays listed with its error.
   */
  async resumePending(): Promise<boolean> {
    this.resuming = true;
    this.resumeError = null;
    try {
      const outcomes = unwrap(await this.#api.resumeOperations());
      const failed = outcomes.filter((o) => !o.ok);
      if (failed.length)
        this.resumeError = failed.map((o) => `${o.operation}: ${o.error ?? "not finished"}`).join("\n");
      return failed.length === 0;
    } catch (e) {
      this.resumeError = toApiError(e).message;
      return false;
    } finally {
      this.resuming = false;
      await Promise.all([this.#agents.load(), this.loadArchives(), this.loadPending()]);
    }
  }
}
