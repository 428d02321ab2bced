import { describe, expect, it } from "vitest";
import type { MemoryItem } from "../src/bindings";
import { MemoryStore, type MemoryApi } from "../src/lib/memory.svelte";

const row = (agent: string, key: string): MemoryItem => ({
  agent,
  key,
  content: `${key} text`,
  category: "core",
  session: null,
  score: null,
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
});

function fakeApi(rows: MemoryItem[], forgotten: string[]): MemoryApi {
  const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
  return {
    memoryRecall: (agent) => ok(rows.filter((r) => r.agent === agent || r.agent === "alice")),
    memoryPage: (agent) => {
      const own = rows.filter((r) => r.agent === agent);
      return ok({ items: own, total: own.length, next_offset: null });
    },
    memoryForget: (agent, key) => {
      forgotten.push(`${agent}/${key}`);
      rows.splice(
        rows.findIndex((r) => r.agent === agent && r.key === key),
        1,
      );
      return ok({ agent, key });
    },
    memoryGrants: (agent) => ok([{ agent, own: true, categories: null, present_categories: ["core"] }]),
  };
}

describe("memory store", () => {
  it("forgets only after the confirmation step, and only the agent's own rows", async () => {
    const rows = [row("bob", "todo"), row("alice", "shared")];
    const forgotten: string[] = [];
    const s = new MemoryStore(fakeApi(rows, forgotten));
    await s.open("bob");
    expect(s.results.map((r) => r.key).sort()).toEqual(["shared", "todo"]);
    expect(s.canForget(row("alice", "shared"))).toBe(false);
    await s.forget("todo");
    expect(forgotten).toEqual([]);
    s.confirming = "todo";
    await s.forget("todo");
    expect(forgotten).toEqual(["bob/todo"]);
    expect(s.page?.total).toBe(0);
    expect(s.forgotten).toBe("todo");
  });
});
