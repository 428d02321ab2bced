import { describe, expect, it } from "vitest";
import type { AgentReference } from "../src/bindings";
import { referenceKindWords, referenceSentence } from "../src/lib/references";

const said = (r: Partial<AgentReference>) => {
  const s = referenceSentence({ holder: "bob", kind: "delegate", access: null, blocks_delete: false, path: "p", ...r });
  return `${s.before}[${s.holder}]${s.after}`;
};

describe("references in words", () => {
  it("says who holds each kind of reference and what it gives them, never the path", () => {
    expect(said({ kind: "delegate" })).toBe("[bob] may delegate to it");
    expect(said({ kind: "workspace_access", access: "read" })).toBe("[bob] has read access to its workspace");
    expect(said({ kind: "workspace_access", access: "write" })).toBe("[bob] has write access to its workspace");
    expect(said({ kind: "workspace_access", access: "read_write" })).toBe(
      "[bob] has read-write access to its workspace",
    );
    expect(said({ kind: "workspace_access" })).toBe("[bob] has access to its workspace");
    expect(said({ kind: "read_memory_from" })).toBe("[bob] reads its memory");
    expect(said({ kind: "cron_agent", holder: "nightly", blocks_delete: true })).toBe(
      "cron job [nightly] runs as it (blocks deletion)",
    );
    expect(said({ kind: "cron_agent", holder: "nightly" })).toBe("cron job [nightly] runs as it (disabled)");
  });
});

describe("reference kinds in words", () => {
  it("names each kind a plan lists without its config spelling", () => {
    expect(referenceKindWords("delegate")).toBe("delegation");
    expect(referenceKindWords("workspace_access")).toBe("workspace access");
    expect(referenceKindWords("read_memory_from")).toBe("memory reads");
    expect(referenceKindWords("cron_agent")).toBe("cron job");
  });
});
