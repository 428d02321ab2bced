import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render, screen, waitFor } from "@testing-library/svelte";
import McpServers from "../src/components/McpServers.svelte";
import { McpStore, type McpApi } from "../src/lib/mcp.svelte";

afterEach(cleanup);

/** What a hostile MCP server can put in front of the user: markup, scripts, controls, bidi. */
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>\u001b[31m\u202etxt.exe';

describe("MCP panel", () => {
  it("shows a server's tool descriptions and errors as text, never as markup", async () => {
    const api: McpApi = {
      mcpServers: () =>
        Promise.resolve({
          status: "ok" as const,
          data: [
            {
              name: "evil",
              transport: "stdio",
              target: "node evil.js",
              status: "running",
              error: null,
              sandbox: "landlock",
              tools: [{ name: "evil__<b>x</b>", description: HOSTILE }],
            },
            {
              name: "broken",
              transport: "stdio",
              target: "node broken.js",
              status: "failed",
              error: HOSTILE,
              sandbox: "landlock",
              tools: [],
            },
          ],
        }),
    };
    const { container } = render(McpServers, { agent: "alice", store: new McpStore(api) });
    await waitFor(() => expect(screen.getByTestId("mcp-server-error")).toBeTruthy());
    // The text is there, character for character ...
    expect(screen.getByTestId("mcp-server-error").textContent).toBe(HOSTILE);
    expect(container.textContent).toContain("evil__<b>x</b>");
    expect(container.textContent).toContain(HOSTILE);
    // ... and none of it became an element or ran.
    expect(container.querySelector("img, script, b")).toBeNull();
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
  });
});
