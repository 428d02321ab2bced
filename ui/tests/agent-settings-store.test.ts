import { describe, expect, it } from "vitest";
import type { AgentEdit, AgentSettingsView } from "../src/bindings";
import { AgentSettingsStore, changesOf, draftOf, keyOf, type AgentSettingsApi } from "../src/lib/agentSettings.svelte";

const alice: AgentSettingsView = {
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
    delegates: ["bob"],
    workspace_grants: [{ agent: "bob", access: "read", categories: null }],
    memory_grants: [{ agent: "carol", access: "memory", categories: ["core", "notes"] }],
    unrestricted_filesystem: false,
    cron_jobs: [],
    referenced_by: [],
  },
  risk_profiles: ["balanced"],
  runtime_profiles: ["standard"],
  providers: ["ollama.local"],
  peers: ["bob", "carol", "mark"],
  disabled: [{ setting: "memory_categories.mark", reason: "`mark` keeps Markdown memory, which has no categories" }],
};

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });

describe("agent settings edits", () => {
  it("an untouched form is no edit", () => {
    expect(changesOf(draftOf(alice), draftOf(alice))).toEqual([]);
  });

  it("the form starts from the agent's values: grants per sibling, memory categories as text", () => {
    const d = draftOf(alice);
    expect(d.grants).toEqual({ bob: "read", carol: "none", mark: "none" });
    expect(d.memory.carol).toEqual({ on: true, categories: "core, notes" });
    expect(d.memory.bob).toEqual({ on: false, categories: "" });
    expect(d.runtime_profile).toBe("");
  });

  it("sends each changed setting as its change, emptied fields as removals", () => {
    const d = draftOf(alice);
    d.grants.bob = "write";
    d.grants.carol = "read_write";
    d.runtime_profile = " ghost ";
    d.model_provider = "";
    d.enabled = false;
    d.delegates = [];
    d.memory.carol.categories = "core";
    d.memory.bob = { on: true, categories: " " };
    expect(changesOf(draftOf(alice), d)).toEqual([
      { kind: "set", field: "runtime_profile", value: "ghost" },
      { kind: "set", field: "model_provider", value: null },
      { kind: "set", field: "enabled", value: false },
      { kind: "set", field: "delegates", value: null },
      { kind: "grant", peer: "bob", access: "write" },
      { kind: "grant", peer: "carol", access: "read_write" },
      { kind: "memory_grant", peer: "bob", categories: null, remove: false },
      { kind: "memory_grant", peer: "carol", categories: ["core"], remove: false },
    ]);
    const off = draftOf(alice);
    off.grants.bob = "none";
    off.memory.carol.on = false;
    expect(changesOf(draftOf(alice), off)).toEqual([
      { kind: "grant", peer: "bob", access: null },
      { kind: "memory_grant", peer: "carol", categories: null, remove: true },
    ]);
  });

  it("names the form field of each place the backend tags a finding with", () => {
    expect(keyOf({ kind: "field", field: "runtime_profile" })).toBe("runtime_profile");
    expect(keyOf({ kind: "field", field: "memory_backend" })).toBe("memory_backend");
    expect(keyOf({ kind: "grant", peer: "bob" })).toBe("grant.bob");
    expect(keyOf({ kind: "memory_grants" })).toBe("memory");
    expect(keyOf(null)).toBeNull();
  });
});

describe("agent settings store", () => {
  it("previews the edit, puts each finding at its field, and saves only what changed", async () => {
    const sent: { preview: AgentEdit[]; save: AgentEdit[] } = { preview: [], save: [] };
    let saved = false;
    const api = {
      agentSettings: () =>
        ok(
          saved
            ? {
                ...alice,
                agent: { ...alice.agent, workspace_grants: [{ agent: "bob", access: "write", categories: null }] },
              }
            : alice,
        ),
      previewAgentEdit: (edit: AgentEdit) => {
        sent.preview.push(edit);
        return ok({
          diff: [{ kind: "add", text: 'runtime_profile = "ghost"' }],
          errors: [
            {
              path: "agents.alice.runtime_profile",
              message: "unknown runtime profile `ghost`",
              line: null,
              column: null,
              place: { kind: "field", field: "runtime_profile" },
            },
            {
              path: "agents.alice.workspace.read_memory_from[0]",
              message: "no categories on markdown",
              line: null,
              column: null,
              place: { kind: "memory_grants" },
            },
            {
              path: "providers.models.ollama.local",
              message: "unreachable",
              line: null,
              column: null,
              place: null,
            },
          ],
        });
      },
      saveAgentEdit: (edit: AgentEdit) => {
        sent.save.push(edit);
        saved = true;
        return ok(alice.agent);
      },
    } as unknown as AgentSettingsApi;
    const s = new AgentSettingsStore(api);
    await s.open("alice");
    expect(s.changes).toEqual([]);
    await s.preview();
    expect(sent.preview).toEqual([]);

    s.draft!.runtime_profile = "ghost";
    await s.preview();
    expect(sent.preview).toEqual([
      { alias: "alice", changes: [{ kind: "set", field: "runtime_profile", value: "ghost" }] },
    ]);
    expect(s.diff).toHaveLength(1);
    expect(s.issuesFor("runtime_profile").map((i) => i.message)).toEqual(["unknown runtime profile `ghost`"]);
    expect(s.issuesFor("memory").map((i) => i.message)).toEqual(["no categories on markdown"]);
    expect(s.issuesFor("risk_profile")).toEqual([]);
    expect(s.issuesFor("grant.bob")).toEqual([]);
    expect(s.otherIssues.map((i) => i.message)).toEqual(["unreachable"]);

    s.draft!.runtime_profile = "";
    s.draft!.grants.bob = "write";
    expect(await s.save()).toBe(true);
    expect(sent.save).toEqual([{ alias: "alice", changes: [{ kind: "grant", peer: "bob", access: "write" }] }]);
    expect(s.saved).toBe(true);
    expect(s.original!.grants.bob).toBe("write");
    expect(s.changes).toEqual([]);
  });

  it("a refused save keeps the form and shows the error", async () => {
    const api = {
      agentSettings: () => ok(alice),
      previewAgentEdit: () => ok({ diff: [], errors: [] }),
      saveAgentEdit: () =>
        Promise.resolve({
          status: "error" as const,
          error: { code: "invalid_config", message: "invalid", details: ["agents.alice.risk_profile: unknown"] },
        }),
    } as unknown as AgentSettingsApi;
    const s = new AgentSettingsStore(api);
    await s.open("alice");
    s.draft!.risk_profile = "nope";
    expect(await s.save()).toBe(false);
    expect(s.error?.code).toBe("invalid_config");
    expect(s.draft!.risk_profile).toBe("nope");
    expect(s.saved).toBe(false);
  });

  it("names why a setting is disabled; the agent-wide entry covers every sibling's categories", async () => {
    const s = new AgentSettingsStore({ agentSettings: () => ok(alice) } as unknown as AgentSettingsApi);
    await s.open("alice");
    expect(s.disabledReason("memory_categories.mark")).toContain("Markdown");
    expect(s.disabledReason("memory_categories.bob")).toBeNull();
    expect(s.disabledReason("memory_grant.bob")).toBeNull();
    const markdown = {
      ...alice,
      disabled: [{ setting: "memory_categories", reason: "this agent keeps Markdown memory" }],
    };
    const m = new AgentSettingsStore({ agentSettings: () => ok(markdown) } as unknown as AgentSettingsApi);
    await m.open("alice");
    expect(m.disabledReason("memory_categories.bob")).toBe("this agent keeps Markdown memory");
  });
});
