import { describe, expect, it } from "vitest";
import { render, fireEvent } from "@testing-library/svelte";
import ToolCard from "../src/components/ToolCard.svelte";
import type { ToolItem, ToolState } from "../src/lib/timeline";
import { clip, CLIP_LINES, openByDefault, stateLabel, toolError, toolSummary } from "../src/lib/toolCard";

function tool(state: ToolState, over: Partial<ToolItem> = {}): ToolItem {
  return {
    kind: "tool",
    key: 1,
    id: "c1",
    name: "file_write",
    arguments: '{"path":"notes/todo.md","content":"a\\nb"}',
    state,
    reason: null,
    decision: null,
    message: null,
    duration_ms: 12,
    output: '{"written":3}',
    receipt_id: null,
    sub_turn_id: null,
    children: [],
    ...over,
  };
}

describe("tool cards", () => {
  it("summarise a call in one line from its most telling argument", () => {
    expect(toolSummary('{"content":"x","path":"a/b.rs"}')).toBe("path: a/b.rs");
    expect(toolSummary('{"command":"ls -la\\n| wc"}')).toBe("command: ls -la | wc");
    expect(toolSummary('{"n":3}')).toBe("n: 3");
    expect(toolSummary("not json")).toBe("not json");
    expect(toolSummary("{}")).toBe("");
    expect(toolSummary(`{"path":"${"x".repeat(200)}"}`).length).toBeLessThanOrEqual(90);
  });

  it("say their status in words and are open only while running, waiting or failed", () => {
    expect(stateLabel("waiting")).toBe("waiting for approval");
    expect(stateLabel("failed")).toBe("error");
    expect((["running", "waiting", "ok", "failed", "denied"] as ToolState[]).filter(openByDefault)).toEqual([
      "running",
      "waiting",
      "failed",
    ]);
  });

  it("read a coded error apart from its message", () => {
    expect(toolError('{"code":"denied_path","message":"outside the workspace","rule":"fs.write"}')).toEqual({
      code: "denied_path",
      message: "outside the workspace",
      rule: "fs.write",
    });
    expect(toolError("plain failure")).toBeNull();
    expect(toolError(null)).toBeNull();
  });

  it("clip long output", () => {
    const long = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n");
    const c = clip(long);
    expect(c.clipped).toBe(true);
    expect(c.shown.split("\n")).toHaveLength(CLIP_LINES);
    expect(clip("short")).toEqual({ shown: "short", clipped: false });
  });

  it("a finished card is folded and opens on click with pretty arguments; show all shows the rest", async () => {
    const output = JSON.stringify({ lines: Array.from({ length: 30 }, (_, i) => `l${i}`) });
    const r = render(ToolCard, { item: tool("ok", { output }), turnId: "t1" });
    expect(r.getByTestId("tool-summary").textContent).toBe("path: notes/todo.md");
    expect(r.getByTestId("tool-state").textContent).toBe("ok");
    expect(r.queryByTestId("tool-args")).toBeNull();
    await fireEvent.click(r.getByTestId("tool-toggle"));
    expect(r.getByTestId("tool-args").textContent).toBe('{\n  "path": "notes/todo.md",\n  "content": "a\\nb"\n}');
    expect(r.getByTestId("tool-output").textContent).not.toContain("l29");
    await fireEvent.click(r.getByTestId("tool-output-all"));
    expect(r.getByTestId("tool-output").textContent).toContain('"l29"');
    await fireEvent.click(r.getByTestId("tool-toggle"));
    expect(r.queryByTestId("tool-args")).toBeNull();
  });

  it("a failed card is open and shows the error code apart from its message", () => {
    const r = render(ToolCard, {
      item: tool("failed", { output: '{"code":"denied_path","message":"`/etc` is outside the workspace"}' }),
      turnId: "t1",
    });
    expect(r.getByTestId("tool-args")).toBeTruthy();
    const err = r.getByTestId("tool-error");
    expect(err.querySelector("code")?.textContent).toBe("denied_path");
    expect(err.textContent).toContain("is outside the workspace");
    expect(r.getByTestId("tool-state").textContent).toBe("error");
  });
});
