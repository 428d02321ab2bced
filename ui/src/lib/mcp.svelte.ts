// The MCP section of an agent's detail view: each server started the way the agent's turns
// start it (inside its sandbox), with its status, sandbox and tools. Starting servers takes a
// moment, so the section says so while it waits, and a later answer for another agent (the
// user moved on) is dropped.

import { commands, type ApiError, type McpServerView } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type McpApi = Pick<typeof commands, "mcpServers">;

export class McpStore {
  agent = $state("");
  servers = $state<McpServerView[]>([]);
  error = $state<ApiError | null>(null);
  /** True while the servers are being started and asked for their tools. */
  checking = $state(false);
  /** True once an answer for `agent` has arrived. */
  loaded = $state(false);

  #api: McpApi;
  #seq = 0;

  constructor(api: McpApi = commands) {
    this.#api = api;
  }

  /** Starts `agent`'s servers and shows what they answered. */
  async load(agent: string) {
    const seq = ++this.#seq;
    if (agent !== this.agent) {
      this.servers = [];
      this.loaded = false;
    }
    this.agent = agent;
    this.checking = true;
    this.error = null;
    try {
      const servers = unwrap(await this.#api.mcpServers(agent));
      if (seq !== this.#seq) return;
      this.servers = servers;
      this.loaded = true;
    } catch (e) {
      if (seq !== this.#seq) return;
      this.error = toApiError(e);
    } finally {
      if (seq === this.#seq) this.checking = false;
    }
  }

  /** Servers that failed to start. */
  get failed(): McpServerView[] {
    return this.servers.filter((s) => s.status === "failed");
  }

  /** How many tools the running servers offer the model. */
  get toolCount(): number {
    return this.servers.reduce((n, s) => n + s.tools.length, 0);
  }
}
