import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/svelte";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import App from "../src/App.svelte";
import type {
  AgentSummary,
  ApiError,
  CreateAgentRequest,
  ImportReport,
  ProviderSummary,
  ZeroclawInstall,
} from "../src/bindings";

type Backend = {
  agents: AgentSummary[];
  providers: ProviderSummary[];
  createdDefault: boolean;
  invoked: { cmd: string; args: unknown }[];
  zeroclaw?: ZeroclawInstall | null;
  paused?: string[];
};

/** The dry-run answer for a ZeroClaw install with agents `writer` and `reviewer`. */
function importReport(prefix: string, dryRun: boolean): ImportReport {
  const agent = (name: string, rows: number) => ({
    source_alias: name,
    alias: `${prefix}${name}`,
    enabled: true,
    risk_profile: `${prefix}guarded`,
    runtime_profile: null,
    model_provider: null,
    memory_backend: "sqlite",
    unrestricted_filesystem: false,
    access: {},
    read_memory_from: [],
    delegates: [],
    cron_jobs: [],
    source_workspace: `/z/agents/${name}/workspace`,
    workspace: `/w/agents/${prefix}${name}/workspace`,
    workspace_files: 2,
    workspace_bytes: 2048,
    memory: { core: rows },
    memory_rows: rows,
    sessions: 0,
  });
  const clash = prefix === "" ? ["agent `writer` already exists in Warren: give a prefix"] : [];
  return {
    plan: {
      source: "/z",
      source_id: "zid",
      prefix,
      agents: [agent("writer", 30), agent("reviewer", 12)],
      risk_profiles: [],
      runtime_profiles: [],
      providers: [],
      cron_jobs: [],
      unmapped: [{ setting: "channels", value: "[]", reason: "Warren has no channels" }],
      callouts: [],
      totals: {
        agents: 2,
        memory_rows: 42,
        markdown_entries: 0,
        workspace_files: 4,
        workspace_bytes: 4096,
        secrets: 0,
        cron_jobs: 0,
      },
      problems: clash,
    },
    dry_run: dryRun,
    update: false,
    imported: dryRun
      ? {
          agents: 0,
          memory_rows: 0,
          memory_rows_skipped: 0,
          markdown_entries: 0,
          workspace_files: 0,
          workspace_bytes: 0,
          secrets: 0,
        }
      : {
          agents: 2,
          memory_rows: 42,
          memory_rows_skipped: 0,
          markdown_entries: 0,
          workspace_files: 4,
          workspace_bytes: 4096,
          secrets: 0,
        },
    warnings: [],
  };
}

function summary(alias: string, provider: string | null = "ollama.local"): AgentSummary {
  return {
    alias,
    enabled: true,
    risk_profile: "balanced",
    runtime_profile: null,
    model_provider: provider,
    memory_backend: "sqlite",
    workspace: `/w/agents/${alias}/workspace`,
  };
}

/** Answers the app's IPC calls the way the Rust commands do, errors included. */
function serve(backend: Backend) {
  mockIPC(
    (cmd, args) => {
      backend.invoked.push({ cmd, args });
      switch (cmd) {
        case "install_info":
          return { root: "/w", config_path: "/w/config.toml", created_default: backend.createdDefault };
        case "list_agents":
          return backend.agents;
        case "providers":
          return backend.providers;
        case "new_agent_choices":
          return {
            risk_profile: "balanced",
            runtime_profile: null,
            model_provider: null,
            memory_backend: null,
            risk_profiles: ["balanced", "locked_down"],
            runtime_profiles: ["quick"],
            providers: backend.providers.map((p) => p.reference),
          };
        case "check_alias": {
          const alias = (args as { alias: string }).alias;
          if (alias.includes("__")) {
            throw { code: "invalid_argument", message: "alias must not contain `__`" } satisfies ApiError;
          }
          if (backend.agents.some((a) => a.alias === alias)) {
            throw { code: "already_exists", message: `agent \`${alias}\` already exists` } satisfies ApiError;
          }
          return null;
        }
        case "create_agent": {
          const req = (args as { req: CreateAgentRequest }).req;
          const a = { ...summary(req.alias, req.model_provider), risk_profile: req.risk_profile };
          backend.agents.push(a);
          return a;
        }
        case "show_agent": {
          const alias = (args as { alias: string }).alias;
          const a = backend.agents.find((x) => x.alias === alias);
          if (!a) throw { code: "not_found", message: `agent \`${alias}\` does not exist` } satisfies ApiError;
          return {
            summary: a,
            delegates: ["bob"],
            workspace_grants: [{ agent: "bob", access: "read", categories: null }],
            memory_grants: [{ agent: "bob", access: "memory", categories: ["core"] }],
            unrestricted_filesystem: false,
            cron_jobs: [],
            referenced_by: [
              { holder: "bob", kind: "delegate", access: null, blocks_delete: false, path: "agents.bob.delegates[0]" },
              {
                holder: "bob",
                kind: "workspace_access",
                access: "read_write",
                blocks_delete: false,
                path: `agents.bob.workspace.access.${alias}`,
              },
              {
                holder: "bob",
                kind: "read_memory_from",
                access: null,
                blocks_delete: false,
                path: "agents.bob.workspace.read_memory_from[0]",
              },
              { holder: "nightly", kind: "cron_agent", access: null, blocks_delete: true, path: "cron.nightly.agent" },
            ],
          };
        }
        case "paused_agents":
          return backend.paused ?? [];
        case "agent_statuses":
        case "pending_approvals":
        case "list_archives":
        case "list_profiles":
          return [];
        case "zeroclaw_install":
          return backend.zeroclaw ?? null;
        case "plan_zeroclaw_import":
          return importReport((args as { prefix: string }).prefix, true);
        case "import_zeroclaw": {
          const prefix = (args as { prefix: string }).prefix;
          backend.agents.push(summary(`${prefix}writer`), summary(`${prefix}reviewer`));
          return importReport(prefix, false);
        }
        case "mcp_servers":
          return [];
        case "preview_provider": {
          const input = (args as { input: { reference: string; model: string } }).input;
          const [family, name] = input.reference.split(".");
          return {
            diff: [
              { kind: "add", text: `[providers.models.${family}.${name}]` },
              { kind: "add", text: `model = "${input.model}"` },
            ],
            errors: [],
          };
        }
        case "save_provider": {
          const input = (args as { input: { reference: string; model: string } }).input;
          const p: ProviderSummary = {
            reference: input.reference,
            family: "openai",
            model: input.model,
            uri: "https://api.openai.com/v1",
            has_key_source: true,
          };
          backend.providers.push(p);
          return {
            reference: p.reference,
            family: p.family,
            model: p.model,
            uri: p.uri,
            secret: "OPENAI_MAIN_API_KEY",
            api_key_env: null,
            key_set: true,
            store: "file",
          };
        }
        case "runtime_status":
          return {
            state: "running",
            problem: null,
            agents: backend.agents.length,
            working: 0,
            error: 0,
            idle: backend.agents.length,
            pending_approvals: 0,
            spent_today_cents: 0,
            budget_today_cents: 500,
          };
        default:
          throw { code: "internal", message: `unexpected command ${cmd}` } satisfies ApiError;
      }
    },
    { shouldMockEvents: true },
  );
}

const ollama: ProviderSummary = {
  reference: "ollama.local",
  family: "ollama",
  model: "llama3.2",
  uri: "http://127.0.0.1:11434",
  has_key_source: false,
};
const openai: ProviderSummary = {
  reference: "openai.main",
  family: "openai",
  model: "gpt-4o-mini",
  uri: "https://api.openai.com/v1",
  has_key_source: true,
};

let backend: Backend;
beforeEach(() => {
  backend = { agents: [], providers: [], createdDefault: false, invoked: [] };
});
afterEach(() => {
  cleanup();
  clearMocks();
});

async function rows(): Promise<string[]> {
  const table = await screen.findByTestId("agents-table");
  return within(table)
    .getAllByTestId("agent-row")
    .map((r) => r.getAttribute("data-alias") ?? "");
}

describe("Agents screen", () => {
  it("offers a ZeroClaw install found, shows its plan before writing, and imports it", async () => {
    backend.agents = [summary("writer")];
    backend.zeroclaw = { path: "/z", imported: false };
    serve(backend);
    render(App);
    const offer = await screen.findByTestId("zeroclaw-import");
    expect(screen.getByTestId("import-source").textContent).toBe("/z");
    expect(backend.invoked.some((c) => c.cmd === "plan_zeroclaw_import")).toBe(false);
    await fireEvent.click(within(offer).getByTestId("import-review"));
    // The plan: a name clash stops the import until a prefix is given.
    await waitFor(() => expect(screen.getByTestId("import-problems").textContent).toContain("give a prefix"));
    expect((screen.getByTestId("import-run") as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId("import-totals").textContent).toContain("42 memory rows");
    expect(screen.getByTestId("import-unmapped").textContent).toContain("channels");
    await fireEvent.input(screen.getByTestId("import-prefix"), { target: { value: "zc_" } });
    await waitFor(() => expect(screen.queryByTestId("import-problems")).toBeNull(), { timeout: 2000 });
    const planned = screen.getAllByTestId("import-agent").map((r) => r.getAttribute("data-alias"));
    expect(planned).toEqual(["zc_writer", "zc_reviewer"]);
    expect(backend.invoked.some((c) => c.cmd === "import_zeroclaw")).toBe(false);
    await fireEvent.click(screen.getByTestId("import-run"));
    await waitFor(() => expect(screen.getByTestId("import-done").textContent).toContain("42 memory rows"));
    expect(backend.invoked.filter((c) => c.cmd === "import_zeroclaw")).toEqual([
      { cmd: "import_zeroclaw", args: expect.objectContaining({ path: "/z", prefix: "zc_" }) },
    ]);
    await waitFor(async () => expect(await rows()).toEqual(["writer", "zc_reviewer", "zc_writer"]));
  });

  it("does not offer an install that was imported already", async () => {
    backend.agents = [summary("writer")];
    backend.zeroclaw = { path: "/z", imported: true };
    serve(backend);
    render(App);
    await rows();
    await waitFor(() => expect(backend.invoked.some((c) => c.cmd === "zeroclaw_install")).toBe(true));
    expect(screen.queryByTestId("zeroclaw-import")).toBeNull();
  });

  it("offers no Pause for a disabled agent, and Resume for one paused before it was disabled", async () => {
    backend.agents = [summary("on"), { ...summary("off"), enabled: false }, { ...summary("held"), enabled: false }];
    backend.paused = ["held"];
    serve(backend);
    render(App);
    const row = async (alias: string) =>
      within((await screen.findAllByTestId("agent-row")).find((r) => r.dataset.alias === alias)!);
    await waitFor(async () => expect((await row("on")).queryByTestId("agent-pause")).not.toBeNull());
    const off = await row("off");
    expect(off.queryByTestId("agent-pause")).toBeNull();
    expect(off.queryByTestId("agent-resume")).toBeNull();
    expect(off.getByTestId("agent-status").textContent?.trim()).toBe("disabled");
    expect(off.getByTestId("agent-status").getAttribute("title")).toContain("enabled = false");
    expect((await row("held")).queryByTestId("agent-resume")).not.toBeNull();
  });

  it("lists every agent of the install with its profile, provider and memory", async () => {
    backend.agents = [summary("scout"), summary("alice", "openai.main"), summary("bob")];
    backend.providers = [ollama, openai];
    serve(backend);
    render(App);
    expect(await rows()).toEqual(["alice", "bob", "scout"]);
    const alice = screen.getAllByTestId("agent-row")[0];
    expect(alice.textContent).toContain("openai.main");
    expect(alice.textContent).toContain("balanced");
    expect(alice.textContent).toContain("sqlite");
    expect(screen.queryByTestId("provider-hint")).toBeNull();
    expect(screen.getByTestId("install-root").textContent).toBe("/w");
  });

  it("says how to connect a provider when only the local Ollama route exists", async () => {
    backend.agents = [summary("assistant")];
    backend.providers = [ollama];
    backend.createdDefault = true;
    serve(backend);
    render(App);
    const hint = await screen.findByTestId("provider-hint");
    expect(hint.textContent).toContain("No hosted model provider is connected yet");
    expect(hint.textContent).toContain("/w/config.toml");
    expect(hint.textContent).toContain("ollama serve");
    expect(screen.getByTestId("created-default").textContent).toContain("/w/config.toml");
    expect(await rows()).toEqual(["assistant"]);
  });

  it("connects a provider from the first-start hint: previewed, saved with its key, hint gone", async () => {
    backend.agents = [summary("assistant")];
    backend.providers = [ollama];
    serve(backend);
    render(App);
    const hint = await screen.findByTestId("provider-hint");
    await fireEvent.click(within(hint).getByTestId("hint-connect"));
    const model = (await screen.findByTestId("provider-model")) as HTMLInputElement;
    expect(model.value).toBe("gpt-4o-mini");
    await fireEvent.input(screen.getByTestId("provider-timeout"), { target: { value: "ten" } });
    await waitFor(() =>
      expect(
        screen
          .getAllByTestId("provider-field-error")
          .map((e) => e.textContent)
          .join(" "),
      ).toContain("whole number"),
    );
    expect((screen.getByTestId("provider-save") as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("provider-timeout"), { target: { value: "" } });
    await fireEvent.input(screen.getByTestId("provider-key"), { target: { value: "sk-test" } });
    await waitFor(() =>
      expect(screen.getByTestId("provider-diff").textContent).toContain("[providers.models.openai.main]"),
    );
    await waitFor(() => expect((screen.getByTestId("provider-save") as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.click(screen.getByTestId("provider-save"));
    await waitFor(() => expect(screen.queryByTestId("provider-hint")).toBeNull());
    const saved = backend.invoked.filter((c) => c.cmd === "save_provider");
    expect(saved).toHaveLength(1);
    expect(saved[0].args).toMatchObject({
      input: { reference: "openai.main", model: "gpt-4o-mini", timeout_secs: null },
      key: "sk-test",
    });
  });

  it("shows the backend's error and its details when the config is invalid", async () => {
    mockIPC((cmd) => {
      if (cmd === "list_agents") {
        throw {
          code: "invalid_config",
          message: "config.toml is invalid",
          details: ["agents.bob.risk_profile: unknown risk profile `nope`"],
        } satisfies ApiError;
      }
      return cmd === "providers" ? [] : { root: "/w", config_path: "/w/config.toml", created_default: false };
    });
    render(App);
    const alert = await screen.findByTestId("load-error");
    expect(alert.textContent).toContain("config.toml is invalid");
    expect(alert.textContent).toContain("agents.bob.risk_profile");
    expect(screen.queryByTestId("agents-table")).toBeNull();
  });

  it("a broken config: says the runtime is stopped, names the file, and loads again once fixed", async () => {
    let broken = true;
    const invoked: string[] = [];
    mockIPC((cmd) => {
      invoked.push(cmd);
      switch (cmd) {
        case "install_info":
          return { root: "/w", config_path: "/w/config.toml", created_default: false };
        case "list_agents":
          if (broken)
            throw {
              code: "invalid_config",
              message: "/w/config.toml has 1 error",
              details: [
                "agents.bob.risk_profile (line 7): risk profile `balancd` is not defined (did you mean `balanced`?)",
              ],
            } satisfies ApiError;
          return [summary("bob")];
        case "open_config_file":
          throw {
            code: "not_found",
            message:
              "no program to open /w/config.toml was found (xdg-open: No such file or directory); open it yourself",
          } satisfies ApiError;
        case "check_config_again":
          return { path: "/w/config.toml", ok: !broken, errors: [], warnings: [], agents: broken ? 0 : 1 };
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
        default:
          return [];
      }
    });
    render(App);
    const alert = await screen.findByTestId("load-error");
    expect(screen.getByTestId("runtime-stopped").textContent).toContain("The runtime is stopped");
    expect(alert.textContent).toContain("did you mean `balanced`?");
    expect((screen.getByTestId("config-path") as HTMLInputElement).value).toBe("/w/config.toml");

    await fireEvent.click(screen.getByTestId("config-open"));
    await waitFor(() => expect(screen.getByTestId("config-open-problem").textContent).toContain("open it yourself"));

    await fireEvent.click(screen.getByTestId("config-check"));
    await waitFor(() => expect(screen.getByTestId("config-still-broken")).toBeTruthy());
    expect(screen.getByTestId("load-error")).toBeTruthy();

    broken = false;
    await fireEvent.click(screen.getByTestId("config-check"));
    await waitFor(async () => expect(await rows()).toEqual(["bob"]));
    expect(screen.queryByTestId("load-error")).toBeNull();
    expect(invoked.filter((c) => c === "check_config_again")).toHaveLength(2);
  });

  it("validates the alias inline and creates the agent through the backend", async () => {
    backend.agents = [summary("alice")];
    backend.providers = [ollama];
    serve(backend);
    render(App);
    await rows();
    const input = screen.getByTestId("create-alias") as HTMLInputElement;
    const submit = screen.getByTestId("create-submit") as HTMLButtonElement;

    await fireEvent.input(input, { target: { value: "a__b" } });
    await waitFor(() => expect(screen.getByTestId("alias-error").textContent).toContain("`__`"));
    expect(submit.disabled).toBe(true);

    await fireEvent.input(input, { target: { value: "alice" } });
    await waitFor(() => expect(screen.getByTestId("alias-error").textContent).toContain("already exists"));

    await fireEvent.input(input, { target: { value: "writer" } });
    await waitFor(() => expect(screen.getByTestId("alias-error").textContent).toBe(""));
    expect(submit.disabled).toBe(false);
    await fireEvent.submit(screen.getByTestId("create-form"));

    await waitFor(async () => expect(await rows()).toEqual(["alice", "writer"]));
    const create = backend.invoked.find((c) => c.cmd === "create_agent");
    expect(create?.args).toEqual({
      req: {
        alias: "writer",
        risk_profile: "balanced",
        runtime_profile: null,
        model_provider: null,
        memory_backend: null,
      },
    });
    expect(screen.getByTestId("create-ok").textContent).toContain("writer");
  });

  it("offers the install's profiles as choices, starting from the backend's defaults", async () => {
    backend.agents = [summary("alice")];
    serve(backend);
    render(App);
    await rows();
    const risk = screen.getByTestId("create-risk") as HTMLSelectElement;
    const runtime = screen.getByTestId("create-runtime") as HTMLSelectElement;
    expect(risk.tagName).toBe("SELECT");
    await waitFor(() => expect([...risk.options].map((o) => o.value)).toEqual(["balanced", "locked_down"]));
    expect(risk.value).toBe("balanced");
    expect([...runtime.options].map((o) => o.textContent)).toEqual(["built-in defaults", "quick"]);
    await fireEvent.change(risk, { target: { value: "locked_down" } });
    await fireEvent.change(runtime, { target: { value: "quick" } });
    const input = screen.getByTestId("create-alias") as HTMLInputElement;
    await fireEvent.input(input, { target: { value: "writer" } });
    await waitFor(() => expect((screen.getByTestId("create-submit") as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.submit(screen.getByTestId("create-form"));
    await waitFor(() => expect(backend.invoked.some((c) => c.cmd === "create_agent")).toBe(true));
    expect(backend.invoked.find((c) => c.cmd === "create_agent")?.args).toEqual({
      req: {
        alias: "writer",
        risk_profile: "locked_down",
        runtime_profile: "quick",
        model_provider: null,
        memory_backend: null,
      },
    });
  });

  it("opens an agent's details from its row: workspace, grants and references", async () => {
    backend.agents = [summary("alice"), summary("bob")];
    backend.providers = [ollama];
    serve(backend);
    render(App);
    await rows();
    await fireEvent.click(screen.getAllByTestId("agent-open")[0]);
    const detail = await screen.findByTestId("agent-detail");
    await waitFor(() => expect(screen.getByTestId("detail-workspace").textContent).toBe("/w/agents/alice/workspace"));
    expect(detail.textContent).toContain("bob: read");
    expect(detail.textContent).toContain("bob (core)");
    // Each reference is a sentence naming its holder; its config path is only the tooltip.
    const refs = screen.getByTestId("detail-referenced-by");
    const items = [...refs.querySelectorAll("li")];
    expect(items.map((li) => li.textContent)).toEqual([
      "bob may delegate to it",
      "bob has read-write access to its workspace",
      "bob reads its memory",
      "cron job nightly runs as it (blocks deletion)",
    ]);
    expect(items.map((li) => li.querySelector("strong")?.textContent)).toEqual(["bob", "bob", "bob", "nightly"]);
    expect(items.map((li) => li.title)).toEqual([
      "agents.bob.delegates[0]",
      "agents.bob.workspace.access.alice",
      "agents.bob.workspace.read_memory_from[0]",
      "cron.nightly.agent",
    ]);
    expect(refs.textContent).not.toMatch(/agents\.|cron\.|\[0\]/);
    expect(refs.querySelector("code")).toBeNull();
    expect(backend.invoked.find((c) => c.cmd === "show_agent")?.args).toEqual({ alias: "alice" });
    await fireEvent.click(screen.getByLabelText("Close details"));
    expect(screen.queryByTestId("agent-detail")).toBeNull();
  });
});
