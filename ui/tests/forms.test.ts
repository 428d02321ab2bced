import { afterEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { AgentEdit, AgentSettingsView, ProfileEdit, ProfileView } from "../src/bindings";
import ProfilesScreen from "../src/screens/Profiles.svelte";
import { numberProblem, ProfilesStore, RUNTIME_FIELDS, type ProfilesApi } from "../src/lib/profiles.svelte";
import AgentSettings from "../src/components/AgentSettings.svelte";

afterEach(cleanup);

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });

const standard: ProfileView = {
  kind: "runtime",
  name: "standard",
  used_by: ["alice"],
  risk: null,
  runtime: {
    max_tool_iterations: 10,
    parallel_tools: false,
    single_tool_rounds: false,
    max_actions_per_hour: 20,
    max_cost_per_day_cents: 500,
    shell_timeout_secs: 60,
    turn_timeout_secs: 600,
    max_delegation_depth: 1,
    max_context_tokens: null,
  },
};

describe("number fields", () => {
  const rounds = RUNTIME_FIELDS.find((f) => f.key === "max_tool_iterations")!;
  const tokens = RUNTIME_FIELDS.find((f) => f.key === "max_context_tokens")!;
  it("say in words what is wrong, before anything is sent", () => {
    expect(numberProblem(rounds, "12")).toBeNull();
    expect(numberProblem(rounds, "")).toBe("Enter a whole number (0 or more).");
    expect(numberProblem(rounds, "ten")).toBe("Enter a whole number (0 or more), digits only.");
    expect(numberProblem(rounds, "-1")).toBe("Enter a whole number (0 or more), digits only.");
    expect(numberProblem(tokens, "")).toBeNull();
  });
});

describe("the profile form", () => {
  function api(previews: ProfileEdit[], saves: ProfileEdit[]): ProfilesApi {
    return {
      listProfiles: () => ok([standard]),
      previewProfileEdit: (edit: ProfileEdit) => {
        previews.push(edit);
        const zero = edit.changes.some((c) => c.field === "max_tool_iterations" && c.value === 0);
        return ok({
          diff: [],
          errors: zero
            ? [
                {
                  path: "runtime_profiles.standard.max_tool_iterations",
                  message: "`max_tool_iterations` must be at least 1",
                  line: null,
                  column: null,
                },
              ]
            : [],
        });
      },
      saveProfileEdit: (edit: ProfileEdit) => {
        saves.push(edit);
        return ok(standard);
      },
    } as unknown as ProfilesApi;
  }

  it("has number inputs; a bad value is named beside its field and Save stays disabled", async () => {
    const previews: ProfileEdit[] = [];
    const saves: ProfileEdit[] = [];
    const profiles = new ProfilesStore(api(previews, saves));
    await profiles.load();
    profiles.open("runtime", "standard");
    render(ProfilesScreen, { profiles });
    const field = (await screen.findByTestId("field-max_tool_iterations")) as HTMLInputElement;
    expect(field.type).toBe("number");
    const save = screen.getByTestId("profile-save") as HTMLButtonElement;
    expect(save.disabled).toBe(true);

    // Emptied: the form says so itself and sends nothing.
    await fireEvent.input(field, { target: { value: "" } });
    const own = field.closest("[data-field]")!;
    await waitFor(() => expect(own.textContent).toContain("Enter a whole number (0 or more)."));
    expect(save.disabled).toBe(true);

    // Out of range: the validator's finding shows beside the field, not in a list elsewhere.
    await fireEvent.input(field, { target: { value: "0" } });
    await waitFor(() => expect(own.textContent).toContain("must be at least 1"));
    expect(screen.queryByTestId("profile-issues")).toBeNull();
    expect(save.disabled).toBe(true);
    expect(screen.getByTestId("profile-blocked").textContent).toContain("Fix what is marked");
    await fireEvent.submit(screen.getByTestId("profile-form"));
    expect(saves).toEqual([]);

    // Fixed: Save comes back and saves the number.
    await fireEvent.input(field, { target: { value: "12" } });
    await waitFor(() => expect(save.disabled).toBe(false));
    expect(own.querySelector("[data-testid=field-error]")).toBeNull();
    await fireEvent.submit(screen.getByTestId("profile-form"));
    await waitFor(() => expect(saves).toHaveLength(1));
    expect(saves[0].changes).toEqual([{ field: "max_tool_iterations", value: 12 }]);
  });
});

describe("the agent settings form", () => {
  const view: AgentSettingsView = {
    agent: {
      summary: {
        alias: "alice",
        enabled: true,
        risk_profile: "balanced",
        runtime_profile: null,
        model_provider: "ollama.local",
        memory_backend: "sqlite",
        workspace: "/w/alice",
      },
      delegates: [],
      workspace_grants: [],
      memory_grants: [],
      unrestricted_filesystem: false,
      cron_jobs: [],
      referenced_by: [],
    },
    risk_profiles: ["balanced", "locked_down"],
    runtime_profiles: ["quick"],
    providers: ["ollama.local", "openai.main"],
    peers: [],
    disabled: [],
  };

  it("offers profiles and providers that exist as choices, and holds Save while the edit is invalid", async () => {
    const sent: AgentEdit[] = [];
    const { commands } = await import("../src/bindings");
    const calls = commands as unknown as Record<string, unknown>;
    calls.agentSettings = () => ok(view);
    calls.previewAgentEdit = (edit: AgentEdit) => {
      sent.push(edit);
      const postgres = edit.changes.some(
        (c) => c.kind === "set" && c.field === "memory_backend" && c.value === "postgres",
      );
      return ok({
        diff: [],
        errors: postgres
          ? [
              {
                path: "memory.postgres.url",
                message: "an agent uses the postgres memory backend but `[memory.postgres] url` is not set",
                line: null,
                column: null,
                place: { kind: "field", field: "memory_backend" },
              },
            ]
          : [],
      });
    };
    calls.policyCheck = () => ok(null);
    render(AgentSettings, { alias: "alice" });
    await fireEvent.click(screen.getByTestId("agent-settings-toggle"));
    const risk = (await screen.findByTestId("setting-risk_profile")) as HTMLSelectElement;
    expect(risk.tagName).toBe("SELECT");
    expect([...risk.options].map((o) => o.value)).toEqual(["balanced", "locked_down"]);
    const runtime = screen.getByTestId("setting-runtime_profile") as HTMLSelectElement;
    expect([...runtime.options].map((o) => o.textContent)).toEqual(["built-in defaults", "quick"]);
    const provider = screen.getByTestId("setting-model_provider") as HTMLSelectElement;
    expect([...provider.options].map((o) => o.value)).toEqual(["", "ollama.local", "openai.main"]);
    expect(provider.value).toBe("ollama.local");

    const save = screen.getByTestId("agent-settings-save") as HTMLButtonElement;
    await fireEvent.change(screen.getByTestId("setting-memory_backend"), { target: { value: "postgres" } });
    await waitFor(() =>
      expect(screen.getByTestId("field-msg-memory_backend").textContent).toContain("[memory.postgres] url"),
    );
    expect(screen.queryByTestId("agent-settings-issues")).toBeNull();
    expect(save.disabled).toBe(true);
    expect(screen.getByTestId("agent-settings-blocked").textContent).toContain("Fix the problem shown");

    await fireEvent.change(risk, { target: { value: "locked_down" } });
    await fireEvent.change(screen.getByTestId("setting-memory_backend"), { target: { value: "sqlite" } });
    await waitFor(() => expect(screen.getByTestId("field-msg-memory_backend").textContent?.trim()).toBe(""));
    expect(save.disabled).toBe(false);
    expect(sent.at(-1)?.changes).toEqual([{ kind: "set", field: "risk_profile", value: "locked_down" }]);
  });

  it("shows each finding beside the field the backend placed it at, an unplaced one under the form", async () => {
    const { commands } = await import("../src/bindings");
    const calls = commands as unknown as Record<string, unknown>;
    calls.agentSettings = () => ok({ ...view, peers: ["bob"] });
    calls.previewAgentEdit = () =>
      ok({
        diff: [{ kind: "add", text: 'runtime_profile = "quick"' }],
        errors: [
          {
            ...finding("agents.alice.runtime_profile", "runtime profile is broken"),
            place: { kind: "field", field: "runtime_profile" },
          },
          {
            ...finding("agents.alice.workspace.access.bob", "bob cannot be granted"),
            place: { kind: "grant", peer: "bob" },
          },
          {
            ...finding("agents.alice.workspace.read_memory_from", "no memory grants here"),
            place: { kind: "memory_grants" },
          },
          { ...finding("providers.models.ollama.local", "unreachable provider"), place: null },
        ],
      });
    render(AgentSettings, { alias: "alice" });
    await fireEvent.click(screen.getByTestId("agent-settings-toggle"));
    const runtime = await screen.findByTestId("setting-runtime_profile");
    await fireEvent.change(runtime, { target: { value: "quick" } });
    await waitFor(() =>
      expect(screen.getByTestId("field-msg-runtime_profile").textContent).toContain("runtime profile is broken"),
    );
    expect(runtime.getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByTestId("field-msg-grant.bob").textContent).toContain("bob cannot be granted");
    expect(screen.getByTestId("field-msg-memory").textContent).toContain("no memory grants here");
    for (const key of ["risk_profile", "model_provider", "memory_backend", "enabled", "delegates"]) {
      expect(screen.getByTestId(`field-msg-${key}`).textContent?.trim()).toBe("");
    }
    const under = screen.getByTestId("agent-settings-issues").textContent ?? "";
    expect(under).toContain("unreachable provider");
    expect(under).not.toContain("broken");
    expect(under).not.toContain("bob cannot");
    expect((screen.getByTestId("agent-settings-save") as HTMLButtonElement).disabled).toBe(true);
  });
});

/** A validator finding at `path` without a line. */
function finding(path: string, message: string) {
  return { path, message, line: null, column: null };
}
