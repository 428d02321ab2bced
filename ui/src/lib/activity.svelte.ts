// The Usage and Logs screens' state: usage and cost by agent and UTC day from the usage ledger,
// and a live tail of the JSON logs (polled while the Logs screen is open) with agent and level
// filters.

import { commands, type ApiError, type LogLevelFilter, type LogLine, type UsageDay } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";
import { USAGE_DAYS } from "./usage";

export type ActivityApi = Pick<typeof commands, "usageByDay" | "tailLogs" | "openLogsFolder">;

export const LOG_LINES = 500;

export class UsageStore {
  rows = $state<UsageDay[]>([]);
  agent = $state("");
  error = $state<ApiError | null>(null);
  shown = $derived(this.agent ? this.rows.filter((r) => r.agent === this.agent) : this.rows);

  #api: ActivityApi;

  constructor(api: ActivityApi = commands) {
    this.#api = api;
  }

  async load(): Promise<void> {
    try {
      this.rows = unwrap(await this.#api.usageByDay(USAGE_DAYS));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }
}

export class LogsStore {
  lines = $state<LogLine[]>([]);
  agent = $state("");
  /** The least severe level shown; "" for every line. */
  level = $state<LogLevelFilter | "">("");
  error = $state<ApiError | null>(null);
  opened = $state<string | null>(null);

  #api: ActivityApi;
  #seq = 0;

  constructor(api: ActivityApi = commands) {
    this.#api = api;
  }

  /** Reads the newest lines with the current filters; an older answer never replaces a newer. */
  async refresh(): Promise<void> {
    const seq = ++this.#seq;
    try {
      const lines = unwrap(
        await this.#api.tailLogs({ agent: this.agent || null, level: this.level || null, limit: LOG_LINES }),
      );
      if (seq !== this.#seq) return;
      this.lines = lines;
      this.error = null;
    } catch (e) {
      if (seq === this.#seq) this.error = toApiError(e);
    }
  }

  async openFolder(): Promise<void> {
    try {
      this.opened = unwrap(await this.#api.openLogsFolder());
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }
}
