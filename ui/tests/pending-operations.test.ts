import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import App from "../src/App.svelte";
import type { AgentSummary, ApiError, PendingOperationView, ResumeOutcomeView } from "../src/bindings";

function summary(alias: string): AgentSummary {
  return {
    alias,
    enabled: true,
    risk_profile: "balanced",
    runtime_profile: null,
    model_provider: "ollama.local",
    memory_backend: "sqlite",
    workspace: `/w/agents/${alias}/workspace`,
  };
}

const MEMORY_ERROR = "memory store: unable to open database file /w/data/memory/memory.db";

function renameAliceToAnn(lastError: string | null): PendingOperationView {
  return {
    journal: "20260101T000000.000000Z-rename-alice-ann",
    kind: "rename",
    description: "rename alice → ann",
    aliases: ["alice", "ann"],
    started_at: "2026-01-01T00:00:00Z",
    steps_done: ["config entry changed", "workspace moved"],
    stopped_at: "memory moved to the new name",
    last_error: lastError,
    hint: "finish it with `warren agents rename alice ann`",
  };
}

type Backend = {
  agents: AgentSummary[];
  pending: PendingOperationView[];
  /** What the next resume does: fail with this error, or finish (null). */
  fault: string | null;
  /** The resume command itself fails with this. */
  resumeThrows: ApiError | null;
  invoked: string[];
};

function serve(b: Backend) {
  mockIPC(
    (cmd) => {
      b.invoked.push(cmd);
      switch (cmd) {
        case "install_info":
          return { root: "/w", config_path: "/w/config.toml", created_default: false };
        case "list_agents":
          return b.agents;
        case "new_agent_choices":
          return {
            risk_profile: "balanced",
            runtime_profile: null,
            model_provider: null,
            memory_backend: null,
            risk_profiles: ["balanced"],
            runtime_profiles: [],
            providers: [],
          };
        case "providers":
        case "agent_statuses":
        case "pending_approvals":
        case "list_archives":
        case "list_profiles":
        case "paused_agents":
          return [];
        case "pending_operations":
          return b.pending;
        case "resume_operations": {
          if (b.resumeThrows) throw b.resumeThrows;
          const op = b.pending[0];
          if (b.fault !== null) {
            b.pending = [{ ...op, last_error: b.fault }];
            return [
              { journal: op.journal, operation: op.description, ok: false, error: b.fault },
            ] satisfies ResumeOutcomeView[];
          }
          b.pending = [];
          b.agents = [summary("ann"), summary("bob")];
          return [
            { journal: op.journal, operation: op.description, ok: true, error: null },
          ] satisfies ResumeOutcomeView[];
        }
        case "runtime_status":
          return {
            state: "running",
            problem: null,
            agents: b.agents.length,
            working: 0,
            error: 0,
            idle: b.agents.length,
            pending_approvals: 0,
            spent_today_cents: 0,
            budget_today_cents: 0,
          };
        default:
          throw { code: "internal", message: `unexpected command ${cmd}` } satisfies ApiError;
      }
    },
    { shouldMockEvents: true },
  );
}

let backend: Backend;
beforeEach(() => {
  backend = { agents: [summary("bob")], pending: [], fault: null, resumeThrows: null, invoked: [] };
});
afterEach(() => {
  cleanup();
  clearMocks();
});

describe("unfinished lifecycle operations on the Agents screen", () => {
  it("shows nothing when no operation is unfinished", async () => {
    serve(backend);
    render(App);
    await screen.findByTestId("agents-table");
    await waitFor(() => expect(backend.invoked).toContain("pending_operations"));
    expect(screen.queryByTestId("pending-operations")).toBeNull();
  });

  it("shows a pending rename with its step and error, keeps it when resuming fails again, and clears it once resumed", async () => {
    backend.pending = [renameAliceToAnn(MEMORY_ERROR)];
    backend.fault = "memory store: still unable to open the database";
    serve(backend);
    render(App);
    const notice = await screen.findByTestId("pending-operations");
    const op = within(notice).getByTestId("pending-operation");
    expect(op.getAttribute("data-aliases")).toBe("alice ann");
    expect(within(op).getByTestId("pending-description").textContent).toBe("rename alice → ann");
    expect(within(op).getByTestId("pending-step").textContent).toContain("memory moved to the new name");
    expect(within(op).getByTestId("pending-error").textContent).toBe(MEMORY_ERROR);

    // The cause is still there: the notice stays, with the new error.
    await fireEvent.click(screen.getByTestId("pending-resume"));
    await waitFor(() =>
      expect(screen.getByTestId("pending-resume-error").textContent).toContain("still unable to open"),
    );
    await waitFor(() =>
      expect(screen.getByTestId("pending-error").textContent).toBe("memory store: still unable to open the database"),
    );
    expect(screen.getByTestId("pending-operations")).toBeTruthy();

    // Fixed: the resume finishes, the notice goes and the agent list shows the new alias.
    backend.fault = null;
    await fireEvent.click(screen.getByTestId("pending-resume"));
    await waitFor(() => expect(screen.queryByTestId("pending-operations")).toBeNull());
    const rows = within(screen.getByTestId("agents-table"))
      .getAllByTestId("agent-row")
      .map((r) => r.getAttribute("data-alias"));
    expect(rows).toEqual(["ann", "bob"]);
    expect(backend.invoked.filter((c) => c === "resume_operations")).toHaveLength(2);
  });

  it("shows the error when the resume command itself fails", async () => {
    backend.pending = [renameAliceToAnn(null)];
    backend.resumeThrows = { code: "storage", message: "sessions.db is locked" };
    serve(backend);
    render(App);
    await screen.findByTestId("pending-operations");
    expect(screen.queryByTestId("pending-error")).toBeNull();
    await fireEvent.click(screen.getByTestId("pending-resume"));
    await waitFor(() => expect(screen.getByTestId("pending-resume-error").textContent).toBe("sessions.db is locked"));
    expect(screen.getByTestId("pending-operations")).toBeTruthy();
  });
});
