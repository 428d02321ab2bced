// The MCP section of an agent's detail view: each server started the way the agent's turns
// start it (inside its sandbox), with its status, sandbox and tools. Starting servers takes a
// moment, so the section says so while it waits, and a later answer for another agent (the
// user moved on) is dropped. Every configured server can be enabled or disabled for the agent
// (a validated edit of its `mcp_servers`), and Test starts one server again and shows its
// tools or its error in words.

import { commands, type ApiError, type McpServerView } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type McpApi = Pick<typeof commands, "mcpServers"> &
  Partial<Pick<typeof commands, "mcpOverview" | "setAgentMcpServer" | "testMcpServer">>;

export class McpStore {
  agent = $state("");
  servers = $state<McpServerView[]>([]);
  error = $state<ApiError | null>(null);
  /** True while the servers are being started and asked for their tools. */
  checking = $state(false);
  /** True once an answer for `agent` has arrived. */
  loaded = $state(false);
  /** Every configured server's name (the choices of the toggles). */
  configured = $state<string[]>([]);
  /** The servers the agent uses (its `mcp_servers`). */
  enabled = $state<string[]>([]);
  /** A toggle in flight (the server's name). */
  toggling = $state<string | null>(null);
  /** Why the last toggle was refused. */
  toggleError = $state<ApiError | null>(null);
  /** The server a Test is running for. */
  testing = $state<string | null>(null);

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
      this.configured = [];
      this.enabled = [];
      this.toggleError = null;
    }
    this.agent = agent;
    this.checking = true;
    this.error = null;
    void this.#loadConfigured(seq);
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

  async #loadConfigured(seq: number) {
    if (!this.#api.mcpOverview) return;
    try {
      const o = unwrap(await this.#api.mcpOverview());
      if (seq !== this.#seq) return;
      this.configured = o.servers.map((s) => s.name);
      this.enabled = o.servers.filter((s) => s.agents.includes(this.agent)).map((s) => s.name);
    } catch {
      // The list of servers itself reports a broken config.
    }
  }

  /** Enables or disables `server` for the agent, then starts its servers again. */
  async toggle(server: string, on: boolean): Promise<boolean> {
    if (!this.#api.setAgentMcpServer) return false;
    this.toggling = server;
    this.toggleError = null;
    try {
      this.enabled = unwrap(await this.#api.setAgentMcpServer(this.agent, server, on));
    } catch (e) {
      this.toggleError = toApiError(e);
      return false;
    } finally {
      this.toggling = null;
    }
    await this.load(this.agent);
    return true;
  }

  /** Starts `server` once more in the agent's sandbox and shows its answer in its row. */
  async test(server: string) {
    if (!this.#api.testMcpServer) return;
    const agent = this.agent;
    this.testing = server;
    try {
      const view = unwrap(await this.#api.testMcpServer(agent, server));
      if (agent !== this.agent) return;
      this.servers = this.servers.map((s) => (s.name === server ? view : s));
    } catch (e) {
      if (agent !== this.agent) return;
      const err = toApiError(e);
      this.servers = this.servers.map((s) =>
        s.name === server ? { ...s, status: "failed", error: err.message, tools: [] } : s,
      );
    } finally {
      this.testing = null;
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
