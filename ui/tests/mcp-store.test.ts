import { describe, expect, it } from "vitest";
import type { McpServerView } from "../src/bindings";
import { McpStore, type McpApi } from "../src/lib/mcp.svelte";

function server(over: Partial<McpServerView> = {}): McpServerView {
  return {
    name: "fs",
    transport: "stdio",
    target: "node server.js /ws",
    status: "running",
    error: null,
    sandbox: "landlock",
    tools: [{ name: "fs__read_file", description: "Read a file" }],
    ...over,
  };
}

describe("mcp store", () => {
  it("shows each server's status and counts the tools of the running ones", async () => {
    const api: McpApi = {
      mcpServers: () =>
        Promise.resolve({
          status: "ok" as const,
          data: [server(), server({ name: "broken", status: "failed", error: "no such program", tools: [] })],
        }),
    };
    const s = new McpStore(api);
    await s.load("alice");
    expect(s.loaded).toBe(true);
    expect(s.checking).toBe(false);
    expect(s.servers.map((x) => x.name)).toEqual(["fs", "broken"]);
    expect(s.failed.map((x) => x.error)).toEqual(["no such program"]);
    expect(s.toolCount).toBe(1);
  });

  it("keeps the error of a refused call and shows no servers", async () => {
    const api: McpApi = {
      mcpServers: () =>
        Promise.resolve({ status: "error" as const, error: { code: "not_found", message: "no agent `zed`" } }),
    };
    const s = new McpStore(api);
    await s.load("zed");
    expect(s.error?.code).toBe("not_found");
    expect(s.servers).toEqual([]);
    expect(s.loaded).toBe(false);
  });

  it("drops an answer for an agent the view has moved away from", async () => {
    let release: (v: McpServerView[]) => void = () => {};
    const slow = new Promise<McpServerView[]>((r) => (release = r));
    const api: McpApi = {
      mcpServers: async (agent) =>
        agent === "alice"
          ? { status: "ok" as const, data: await slow }
          : { status: "ok" as const, data: [server({ name: "bobs" })] },
    };
    const s = new McpStore(api);
    const first = s.load("alice");
    await s.load("bob");
    release([server({ name: "alices" })]);
    await first;
    expect(s.agent).toBe("bob");
    expect(s.servers.map((x) => x.name)).toEqual(["bobs"]);
    expect(s.checking).toBe(false);
  });
});
