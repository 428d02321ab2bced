// The Memory browser's state for one agent: a search over what it may recall (its own rows and
// what its grants expose), its own rows page by page, the row being inspected, forget with a
// confirmation step, and the resolved allowlist.

import { commands, type ApiError, type MemoryGrantView, type MemoryItem, type MemoryPage } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type MemoryApi = Pick<typeof commands, "memoryRecall" | "memoryPage" | "memoryForget" | "memoryGrants">;

export const PAGE_SIZE = 20;
export const RECALL_LIMIT = 50;

export class MemoryStore {
  agent = $state<string | null>(null);
  query = $state("");
  results = $state<MemoryItem[]>([]);
  page = $state<MemoryPage | null>(null);
  offset = $state(0);
  grants = $state<MemoryGrantView[]>([]);
  inspected = $state<MemoryItem | null>(null);
  confirming = $state<string | null>(null);
  forgotten = $state<string | null>(null);
  error = $state<ApiError | null>(null);

  #api: MemoryApi;
  #searchSeq = 0;

  constructor(api: MemoryApi = commands) {
    this.#api = api;
  }

  /** Shows `agent`'s memory from the first page, with an empty search (the most recent rows). */
  async open(agent: string): Promise<void> {
    this.agent = agent;
    this.query = "";
    this.offset = 0;
    this.inspected = null;
    this.confirming = null;
    this.forgotten = null;
    this.error = null;
    await Promise.all([this.search(), this.loadPage(0), this.loadGrants()]);
  }

  async search(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    const seq = ++this.#searchSeq;
    try {
      const rows = unwrap(await this.#api.memoryRecall(agent, this.query.trim(), RECALL_LIMIT));
      if (seq === this.#searchSeq) this.results = rows;
    } catch (e) {
      if (seq === this.#searchSeq) this.error = toApiError(e);
    }
  }

  async loadPage(offset: number): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      this.page = unwrap(await this.#api.memoryPage(agent, offset, PAGE_SIZE));
      this.offset = offset;
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  async loadGrants(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      this.grants = unwrap(await this.#api.memoryGrants(agent));
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  inspect(item: MemoryItem): void {
    this.inspected = item;
    this.confirming = null;
  }

  /** Only the agent's own rows can be forgotten. */
  canForget(item: MemoryItem): boolean {
    return item.agent === this.agent;
  }

  /** Forgets the row once confirmed, then reloads what shows it. */
  async forget(key: string): Promise<void> {
    const agent = this.agent;
    if (!agent || this.confirming !== key) return;
    try {
      unwrap(await this.#api.memoryForget(agent, key));
      this.forgotten = key;
      this.confirming = null;
      if (this.inspected?.key === key && this.inspected.agent === agent) this.inspected = null;
      this.error = null;
      const last = this.page && this.offset > 0 && this.page.items.length === 1;
      await Promise.all([
        this.search(),
        this.loadPage(last ? Math.max(0, this.offset - PAGE_SIZE) : this.offset),
        this.loadGrants(),
      ]);
    } catch (e) {
      this.error = toApiError(e);
    }
  }
}
