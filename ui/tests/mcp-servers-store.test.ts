import { describe, expect, it } from "vitest";
import type { McpEditPreview, McpServerInput, McpServerView, McpServersOverview } from "../src/bindings";
import { McpServersStore, argLines, isCredential, type McpServersApi } from "../src/lib/mcpServers.svelte";
import { McpStore, type McpApi } from "../src/lib/mcp.svelte";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });

const OVERVIEW: McpServersOverview = {
  servers: [
    {
      name: "fs",
      command: "node",
      args: ["server.js", "."],
      env: [{ name: "API_TOKEN", value: "s3cret-token" }],
      url: null,
      agents: ["bob"],
    },
  ],
  agents: ["alice", "bob"],
  credential_words: ["KEY", "TOKEN"],
};

const EMPTY: McpEditPreview = { diff: [{ kind: "add", text: "[mcp_servers.x]" }], errors: [], agents_losing: [] };

function api(over: Partial<McpServersApi> = {}, seen: McpServerInput[] = []): McpServersApi {
  return {
    mcpOverview: () => ok(OVERVIEW),
    previewMcpServer: (input) => {
      seen.push(input);
      return ok(EMPTY);
    },
    saveMcpServer: (input) => ok({ ...OVERVIEW.servers[0], name: input.name }),
    previewRemoveMcpServer: () => ok({ diff: [], errors: [], agents_losing: ["bob"] }),
    removeMcpServer: () => ok(["bob"]),
    testMcpServer: () => ok(view()),
    ...over,
  };
}

function view(over: Partial<McpServerView> = {}): McpServerView {
  return {
    name: "fs",
    transport: "stdio",
    target: "node server.js",
    status: "running",
    error: null,
    sandbox: "bubblewrap",
    tools: [{ name: "fs__read", description: "Read" }],
    ...over,
  };
}

describe("MCP servers store", () => {
  it("sends the form as the backend takes it: one argument per line, named variables, agents in order", async () => {
    const seen: McpServerInput[] = [];
    const s = new McpServersStore(api({}, seen));
    await s.load();
    s.openNew();
    s.draft!.name = " search ";
    s.draft!.command = "uvx";
    s.draft!.args = "mcp-search\n\n  --root /a b  \r\n";
    s.draft!.env = [
      { name: "LEVEL", value: "warn" },
      { name: "", value: "" },
    ];
    s.toggleAgent("bob", true);
    s.toggleAgent("alice", true);
    await s.preview();
    expect(seen[0]).toEqual({
      name: "search",
      command: "uvx",
      args: ["mcp-search", "  --root /a b  "],
      env: [{ name: "LEVEL", value: "warn" }],
      agents: ["alice", "bob"],
      existing: false,
    });
    expect(s.canSave).toBe(true);
  });

  it("puts each finding beside its field and keeps Save disabled while any exists", async () => {
    const s = new McpServersStore(
      api({
        previewMcpServer: () =>
          ok({
            diff: EMPTY.diff,
            errors: [
              { field: "name", path: "mcp_servers.Bad", message: "invalid MCP server name `Bad`" },
              { field: "env", path: "mcp_servers.Bad.env.DISPLAY", message: "`DISPLAY` is never set" },
            ],
            agents_losing: [],
          }),
      }),
    );
    s.openNew();
    s.draft!.name = "Bad";
    s.draft!.command = "x";
    await s.preview();
    expect(s.issuesAt("name").map((i) => i.message)).toEqual(["invalid MCP server name `Bad`"]);
    expect(s.issuesAt("env").map((i) => i.path)).toEqual(["mcp_servers.Bad.env.DISPLAY"]);
    expect(s.issuesAt("command")).toEqual([]);
    expect(s.canSave).toBe(false);
  });

  it("catches an empty command and a variable given twice before saving", async () => {
    const s = new McpServersStore(api());
    s.openNew();
    s.draft!.name = "x";
    await s.preview();
    expect(s.localErrors.command).toContain("command");
    expect(s.canSave).toBe(false);
    s.draft!.command = "node";
    s.draft!.env = [
      { name: "A", value: "1" },
      { name: "A", value: "2" },
    ];
    expect(s.localErrors.env).toContain("`A` is given twice");
    expect(s.canSave).toBe(false);
  });

  it("opens an existing server with its values and says which agents a save takes it from", async () => {
    const s = new McpServersStore(api({ previewMcpServer: () => ok({ ...EMPTY, agents_losing: ["bob"] }) }));
    await s.load();
    s.openEdit(s.servers[0]);
    expect(s.draft).toEqual({
      existing: true,
      name: "fs",
      command: "node",
      args: "server.js\n.",
      env: [{ name: "API_TOKEN", value: "s3cret-token" }],
      agents: ["bob"],
    });
    s.toggleAgent("bob", false);
    await s.preview();
    expect(s.agentsLosing).toEqual(["bob"]);
  });

  it("shows the agents that lose a server before removing it, and after", async () => {
    const removed: string[] = [];
    const s = new McpServersStore(
      api({
        removeMcpServer: (name) => {
          removed.push(name);
          return ok(["bob"]);
        },
      }),
    );
    await s.askRemove("fs");
    expect(s.removing?.preview.agents_losing).toEqual(["bob"]);
    expect(removed).toEqual([]);
    expect(await s.confirmRemove()).toBe(true);
    expect(removed).toEqual(["fs"]);
    expect(s.removed).toEqual({ name: "fs", agents: ["bob"] });
    expect(s.removing).toBeNull();
  });

  it("keeps a failed test's reason in words", async () => {
    const s = new McpServersStore(
      api({
        testMcpServer: () => ok(view({ status: "failed", error: "program `nope` was not found", tools: [] })),
      }),
    );
    await s.load();
    expect(s.agentFor(s.servers[0])).toBe("bob");
    await s.test("fs", "bob");
    expect(s.tests.fs.error).toBe("program `nope` was not found");
    expect(s.testing).toBeNull();
  });

  it("marks credential variables by the backend's words and reads arguments by line", () => {
    expect(isCredential("github_token", ["TOKEN"])).toBe(true);
    expect(isCredential("LOG_LEVEL", ["TOKEN", "KEY"])).toBe(false);
    expect(argLines("a\n\nb c\r\n")).toEqual(["a", "b c"]);
  });
});

describe("MCP panel store toggles and tests", () => {
  it("enables a server for the agent, then starts its servers again", async () => {
    const calls: string[] = [];
    let users = ["bob"];
    const a: McpApi = {
      mcpServers: () => {
        calls.push("list");
        return ok([view()]);
      },
      mcpOverview: () => ok({ ...OVERVIEW, servers: [{ ...OVERVIEW.servers[0], agents: users }] }),
      setAgentMcpServer: (agent, server, on) => {
        calls.push(`${agent}:${server}:${on}`);
        users = on ? [...users, agent] : users.filter((u) => u !== agent);
        return ok(on ? ["fs"] : []);
      },
      testMcpServer: () => ok(view({ status: "failed", error: "gone", tools: [] })),
    };
    const s = new McpStore(a);
    await s.load("alice");
    await Promise.resolve();
    expect(s.configured).toEqual(["fs"]);
    expect(s.enabled).toEqual([]);
    expect(await s.toggle("fs", true)).toBe(true);
    expect(s.enabled).toEqual(["fs"]);
    expect(calls).toEqual(["list", "alice:fs:true", "list"]);
    await Promise.resolve();
    expect(s.enabled).toEqual(["fs"]);
    await s.test("fs");
    expect(s.servers[0].error).toBe("gone");
    expect(s.servers[0].status).toBe("failed");
  });

  it("keeps a refused toggle's reason", async () => {
    const s = new McpStore({
      mcpServers: () => ok([]),
      setAgentMcpServer: () =>
        Promise.resolve({ status: "error" as const, error: { code: "not_found", message: "no `x`" } }),
    });
    await s.load("alice");
    expect(await s.toggle("x", true)).toBe(false);
    expect(s.toggleError?.message).toBe("no `x`");
  });
});
