import { describe, expect, it } from "vitest";
import type { ProfileView, RemovedProfile, RiskProfile } from "../src/bindings";
import { changesOf, draftOf, ProfilesStore, RISK_FIELDS, type ProfilesApi } from "../src/lib/profiles.svelte";

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

describe("profile edits", () => {
  it("an untouched form is no edit", () => {
    expect(changesOf("runtime", draftOf(standard), draftOf(standard))).toEqual([]);
  });

  it("sends only the changed fields, numbers as numbers and anything else as typed", () => {
    const draft = draftOf(standard);
    draft.single_tool_rounds = true;
    draft.max_tool_iterations = "-1";
    draft.shell_timeout_secs = "ten";
    draft.max_context_tokens = "8000";
    expect(changesOf("runtime", draftOf(standard), draft)).toEqual([
      { field: "max_tool_iterations", value: -1 },
      { field: "single_tool_rounds", value: true },
      { field: "shell_timeout_secs", value: "ten" },
      { field: "max_context_tokens", value: 8000 },
    ]);
    const cleared = { ...draft, max_context_tokens: "" };
    expect(changesOf("runtime", { ...draftOf(standard), max_context_tokens: "8000" }, cleared)).toContainEqual({
      field: "max_context_tokens",
      value: null,
    });
  });

  it("lists are one item a line, blank lines dropped", () => {
    const balanced: ProfileView = {
      kind: "risk",
      name: "balanced",
      used_by: [],
      runtime: null,
      risk: {
        level: "supervised",
        workspace_only: true,
        allowed_commands: ["ls", "cat"],
        forbidden_paths: [],
        allowed_roots: [],
        require_approval_for_medium_risk: true,
        block_high_risk_commands: true,
        auto_approve: [],
        always_ask: [],
        allowed_tools: [],
        excluded_tools: [],
        sandbox: "auto",
        shell_env_passthrough: [],
        delegation: "forbidden",
      },
    };
    const original = draftOf(balanced);
    expect(original.allowed_commands).toBe("ls\ncat");
    const draft = { ...original, allowed_commands: "ls\n\n git \n", level: "full" };
    expect(changesOf("risk", original, draft)).toEqual([
      { field: "level", value: "full" },
      { field: "allowed_commands", value: ["ls", "git"] },
    ]);
  });
});

describe("the risk profile form", () => {
  it("has a field for every key a risk profile has", () => {
    // `Required` makes this fail to type-check when the backend adds a key the form lacks.
    const every: Required<RiskProfile> = {
      level: "supervised",
      workspace_only: true,
      allowed_commands: [],
      forbidden_paths: [],
      allowed_roots: [],
      require_approval_for_medium_risk: true,
      block_high_risk_commands: true,
      auto_approve: [],
      always_ask: [],
      allowed_tools: [],
      excluded_tools: [],
      sandbox: "auto",
      shell_env_passthrough: [],
      delegation: "forbidden",
      network: false,
    };
    expect(RISK_FIELDS.map((f) => f.key).sort()).toEqual(Object.keys(every).sort());
  });
});

describe("profiles store", () => {
  const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
  const fail = (code: "invalid_config" | "io", message: string) =>
    Promise.resolve({ status: "error" as const, error: { code, message, details: [] } });

  it("a reload after the config changed keeps a failed save's error; a good reload clears a load error", async () => {
    let listFails = false;
    const api: ProfilesApi = {
      listProfiles: () => (listFails ? fail("io", "cannot read") : ok([standard])),
      previewProfileEdit: () => ok({ diff: [], errors: [] }),
      saveProfileEdit: () => fail("invalid_config", "max_tool_iterations: invalid value"),
      deleteProfile: () => ok(null),
      createProfile: () => ok(null),
    } as unknown as ProfilesApi;
    const s = new ProfilesStore(api);
    await s.load();
    s.open("runtime", "standard");
    s.draft.max_tool_iterations = "0";
    await s.save();
    expect(s.error?.code).toBe("invalid_config");
    await s.load();
    expect(s.error?.code).toBe("invalid_config");

    listFails = true;
    await s.load();
    expect(s.error?.code).toBe("io");
    listFails = false;
    await s.load();
    expect(s.error).toBeNull();
  });

  it("asks before an open drops unsaved edits; a refused delete is shown beside its profile; Undo restores", async () => {
    const careful: ProfileView = { ...standard, name: "careful", used_by: [] };
    let listed = [standard, careful];
    const removed: RemovedProfile = { kind: "runtime", name: "careful", text: "[runtime_profiles.careful]\n" };
    const restored: RemovedProfile[] = [];
    const api: ProfilesApi = {
      listProfiles: () => ok(listed),
      previewProfileEdit: () => ok({ diff: [], errors: [] }),
      saveProfileEdit: () => ok(null),
      deleteProfile: (_kind: string, name: string) => {
        if (name === "standard")
          return Promise.resolve({
            status: "error" as const,
            error: { code: "denied", message: "runtime_profiles `standard` is used by alice", details: ["alice"] },
          });
        listed = [standard];
        return ok(removed);
      },
      restoreProfile: (r: RemovedProfile) => {
        restored.push(r);
        listed = [standard, careful];
        return ok(careful);
      },
      createProfile: () => ok(null),
    } as unknown as ProfilesApi;
    const s = new ProfilesStore(api);
    await s.load();
    s.open("runtime", "standard");
    s.draft.max_tool_iterations = "12";
    s.open("runtime", "careful");
    expect(s.selected?.name).toBe("standard");
    expect(s.switching).toEqual({ kind: "runtime", name: "careful" });
    expect(s.draft.max_tool_iterations).toBe("12");
    s.open("runtime", "careful", true);
    expect(s.selected?.name).toBe("careful");
    expect(s.switching).toBeNull();

    await s.remove("runtime", "standard");
    expect(s.deleteError?.name).toBe("standard");
    expect(s.deleteError?.error.code).toBe("denied");
    expect(s.error).toBeNull();
    expect(s.selected?.name).toBe("careful");

    await s.remove("runtime", "careful");
    expect(s.deleteError).toBeNull();
    expect(s.removed).toEqual(removed);
    expect(s.selected).toBeNull();
    expect(s.profiles.map((p) => p.name)).toEqual(["standard"]);
    await s.undoRemove();
    expect(restored).toEqual([removed]);
    expect(s.removed).toBeNull();
    expect(s.selected?.name).toBe("careful");
    expect(s.profiles.map((p) => p.name)).toEqual(["standard", "careful"]);
  });
});

describe("the network choice", () => {
  const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
  const risk = (network: RiskProfile["network"]): ProfileView => ({
    kind: "risk",
    name: "net",
    used_by: ["web"],
    runtime: null,
    risk: { level: "full", network },
  });

  it("reads off, on and a table of domains, and sends the value chosen", () => {
    expect(draftOf(risk(false)).network).toBe("off");
    expect(draftOf(risk(true)).network).toBe("on");
    const table = draftOf(risk({ allow: ["crates.io", "*.npmjs.org"], deny: ["evil.example"], allow_private: true }));
    expect(table.network).toBe("domains");
    expect(table["network.allow"]).toBe("crates.io\n*.npmjs.org");
    expect(table["network.deny"]).toBe("evil.example");
    expect(table["network.allow_private"]).toBe(true);
    expect(changesOf("risk", table, { ...table })).toEqual([]);

    // By domain from off: the lists one pattern a line.
    const off = draftOf(risk(false));
    const chosen = { ...off, network: "domains", "network.allow": " crates.io \n\nlocalhost\n" };
    expect(changesOf("risk", off, chosen)).toEqual([
      { field: "network", value: { allow: ["crates.io", "localhost"], deny: [], allow_private: false } },
    ]);
    // Back to on: a switch, whatever the lists held; back to what it was: no change.
    expect(changesOf("risk", table, { ...table, network: "on" })).toEqual([{ field: "network", value: true }]);
    expect(changesOf("risk", off, { ...chosen, network: "off" })).toEqual([]);
    // A list edited while By domain stays chosen sends the whole table.
    expect(changesOf("risk", table, { ...table, "network.allow": "crates.io" })).toEqual([
      { field: "network", value: { allow: ["crates.io"], deny: ["evil.example"], allow_private: true } },
    ]);
  });

  it("a bad pattern's finding shows beside its list, not beside the choice, and Save waits", async () => {
    const api = {
      listProfiles: () => ok([risk(false)]),
      previewProfileEdit: () =>
        ok({
          diff: [],
          errors: [
            {
              path: "risk_profiles.net.network.allow[1]",
              message: '"https://pypi.org/simple" is a URL; write the host alone (`pypi.org`)',
              line: null,
              column: null,
            },
            { path: "risk_profiles.net.network", message: "reaches further than its parent", line: null, column: null },
          ],
        }),
    } as unknown as ProfilesApi;
    const s = new ProfilesStore(api);
    await s.load();
    s.open("risk", "net");
    s.draft.network = "domains";
    s.draft["network.allow"] = "crates.io\nhttps://pypi.org/simple";
    await s.preview();
    expect(s.messagesFor("network.allow")).toEqual([
      '"https://pypi.org/simple" is a URL; write the host alone (`pypi.org`)',
    ]);
    expect(s.messagesFor("network.deny")).toEqual([]);
    expect(s.messagesFor("network")).toEqual(["reaches further than its parent"]);
    expect(s.otherIssues).toEqual([]);
    expect(s.canSave).toBe(false);
  });
});
