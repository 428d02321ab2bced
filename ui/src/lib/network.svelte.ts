// The Network screen's state: the connections agents' sandboxed commands and MCP servers made,
// or were refused, through Warren's proxy (profiles whose network is by domain), newest first,
// filtered by agent and "refused only"; and "Allow this domain" on a refused one, which shows
// the edit of the agent's risk profile (a diff of config.toml) and saves it on confirmation.
// Which rule matches a host is decided by the backend alone.

import { commands, type AllowDomainPreview, type ApiError, type NetworkConnectionView } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type NetworkApi = Pick<typeof commands, "networkLog" | "previewAllowDomain" | "allowDomain">;

/** How many connections the screen lists. */
export const NETWORK_ROWS = 500;

/** Identifies a row across refreshes (the same connection keeps it). */
export function rowKey(r: NetworkConnectionView): string {
  return `${r.agent}\u0000${r.time}\u0000${r.host}\u0000${r.port}\u0000${r.kind}`;
}

/** `host:port`, an IPv6 literal in brackets. (Not named `target`: that name breaks the
 *  test runner's transform of a component importing it.) */
export function hostPort(r: Pick<NetworkConnectionView, "host" | "port">): string {
  return r.host.includes(":") ? `[${r.host}]:${r.port}` : `${r.host}:${r.port}`;
}

/** A byte count in words: `512 B`, `1.2 kB`, `3.4 MB`. */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** A duration in words: `12 ms`, `1.4 s`, `2 min 5 s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** What decided, in words: `allowed by allow "crates.io"`, `refused: no allow pattern matches`. */
export function decision(r: Pick<NetworkConnectionView, "allowed" | "rule">): string {
  return r.allowed ? `allowed by ${r.rule}` : `refused: ${r.rule}`;
}

export class NetworkStore {
  rows = $state<NetworkConnectionView[]>([]);
  /** The agent shown ("" for every agent). */
  agent = $state("");
  refusedOnly = $state(false);
  /** True once the first answer came (the empty state is not shown before). */
  loaded = $state(false);
  error = $state<ApiError | null>(null);
  /** The refused connection whose "Allow this domain" was clicked, with the edit it would
   *  make, waiting for confirmation. */
  allowing = $state<{ key: string; row: NetworkConnectionView; preview: AllowDomainPreview } | null>(null);
  /** Why allowing a row's domain was refused (or its save failed), shown beside that row. */
  allowError = $state<{ key: string; error: ApiError } | null>(null);
  /** The domain allowed last, for the notice above the list. */
  allowed = $state<{ pattern: string; profile: string; used_by: string[] } | null>(null);
  busy = $state(false);

  #api: NetworkApi;
  #seq = 0;

  constructor(api: NetworkApi = commands) {
    this.#api = api;
  }

  /** Reads the newest connections with the current filters; an older answer never replaces a
   *  newer one. */
  async refresh(): Promise<void> {
    const seq = ++this.#seq;
    try {
      const rows = unwrap(await this.#api.networkLog(this.agent || null, this.refusedOnly, NETWORK_ROWS));
      if (seq !== this.#seq) return;
      this.rows = rows;
      this.error = null;
    } catch (e) {
      if (seq === this.#seq) this.error = toApiError(e);
    } finally {
      if (seq === this.#seq) this.loaded = true;
    }
  }

  /** Asks what allowing `row`'s host would change; the answer waits for `confirmAllow`. */
  async previewAllow(row: NetworkConnectionView): Promise<void> {
    const key = rowKey(row);
    this.allowing = null;
    this.allowError = null;
    this.allowed = null;
    try {
      const preview = unwrap(await this.#api.previewAllowDomain(row.agent, row.host, row.port));
      this.allowing = { key, row, preview };
    } catch (e) {
      this.allowError = { key, error: toApiError(e) };
    }
  }

  cancelAllow(): void {
    this.allowing = null;
  }

  /** Saves the edit shown (built again from the config as it is now), then lists again. */
  async confirmAllow(): Promise<void> {
    const a = this.allowing;
    if (!a || this.busy) return;
    this.busy = true;
    try {
      const saved = unwrap(await this.#api.allowDomain(a.row.agent, a.row.host, a.row.port));
      this.allowing = null;
      this.allowed = { pattern: a.preview.pattern, profile: saved.name, used_by: saved.used_by };
      await this.refresh();
    } catch (e) {
      this.allowing = null;
      this.allowError = { key: a.key, error: toApiError(e) };
    } finally {
      this.busy = false;
    }
  }
}
