import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import McpServerSettings from "../src/components/McpServerSettings.svelte";
import { McpServersStore, type McpServersApi } from "../src/lib/mcpServers.svelte";

afterEach(cleanup);

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });

function api(): McpServersApi {
  return {
    mcpOverview: () => ok({ servers: [], agents: ["alice"], credential_words: ["TOKEN"] }),
    previewMcpServer: (input) =>
      ok({
        diff: [
          { kind: "add", text: `[mcp_servers.${input.name}]` },
          { kind: "add", text: 'env = { API_TOKEN = "••••••" }' },
        ],
        errors: input.name.includes("__")
          ? [{ field: "name", path: `mcp_servers.${input.name}`, message: `invalid MCP server name \`${input.name}\`` }]
          : [],
        agents_losing: [],
      }),
    saveMcpServer: () => Promise.reject(new Error("not called")),
    previewRemoveMcpServer: () => Promise.reject(new Error("not called")),
    removeMcpServer: () => Promise.reject(new Error("not called")),
    testMcpServer: () => Promise.reject(new Error("not called")),
  };
}

describe("MCP servers form", () => {
  it("shows a finding beside its field, keeps Save disabled, and hides a credential's value", async () => {
    const store = new McpServersStore(api());
    render(McpServerSettings, { store });
    await waitFor(() => expect(screen.getByTestId("mcp-settings-none")).toBeTruthy());
    await fireEvent.click(screen.getByTestId("mcp-add"));
    await fireEvent.input(screen.getByTestId("mcp-name"), { target: { value: "Bad__x" } });
    await fireEvent.input(screen.getByTestId("mcp-command"), { target: { value: "node" } });
    await fireEvent.click(screen.getByTestId("mcp-env-add"));
    await fireEvent.input(screen.getByTestId("mcp-env-name"), { target: { value: "API_TOKEN" } });
    await waitFor(() =>
      expect(
        screen
          .getAllByTestId("mcp-field-error")
          .map((e) => [e.dataset.field, e.textContent])
          .filter(([f]) => f === "name"),
      ).toEqual([["name", "invalid MCP server name `Bad__x`"]]),
    );
    expect((screen.getByTestId("mcp-save") as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId("mcp-env-value") as HTMLInputElement).type).toBe("password");
    expect(screen.getByTestId("mcp-diff").textContent).toContain("••••••");

    await fireEvent.input(screen.getByTestId("mcp-name"), { target: { value: "fs" } });
    await waitFor(() => expect(screen.queryAllByTestId("mcp-field-error")).toEqual([]));
    expect((screen.getByTestId("mcp-save") as HTMLButtonElement).disabled).toBe(false);
  });
});
