import { describe, expect, it } from "vitest";
import type { LiveFrame, LiveSnapshot, TurnEvent } from "../src/bindings";
import { emptyStream, onFrame, onSnapshot, replay } from "../src/lib/timeline";

let clock = 0;
function ev(kind: Record<string, unknown> & { type: string }, turn = "t1"): TurnEvent {
  clock += 1;
  return {
    turn_id: turn,
    agent: "alice",
    seq: clock,
    time: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, clock * 100)).toISOString(),
    ...kind,
  } as unknown as TurnEvent;
}

const started = (turn = "t1") => ev({ type: "turn_started", session_id: "s1", trigger: "user", prompt: "write it" }, turn);

function frames(events: TurnEvent[], from = 1): LiveFrame[] {
  return events.map((event, i) => ({ agent: "alice", seq: from + i, event }));
}

function snapshot(fs: LiveFrame[], last: number, truncated = false): LiveSnapshot {
  return { agent: "alice", status: "working", last_seq: last, frames: fs, truncated };
}

describe("the timeline reducer", () => {
  it("builds a turn with model requests, streamed text, a tool card and usage", () => {
    const t = replay([
      started(),
      ev({ type: "model_request", route_entry: "openai.fake", attempt: 1, iteration: 1 }),
      ev({ type: "usage", input_tokens: 12, output_tokens: 3, cost_usd: 0.001 }),
      ev({ type: "tool_call", id: "c1", name: "file_write", arguments: '{"path":"a.txt"}' }),
      ev({ type: "approval_requested", id: "c1", tool: "file_write", arguments: "{}", reason: "writes a file" }),
      ev({ type: "approval_resolved", id: "c1", decision: "approve_once", message: null }),
      ev({ type: "tool_result", id: "c1", ok: true, output: "wrote 2 bytes", duration_ms: 4, receipt_id: "r1" }),
      ev({ type: "model_request", route_entry: "openai.fake", attempt: 1, iteration: 2 }),
      ev({ type: "text_delta", text: "Done" }),
      ev({ type: "text_delta", text: " now." }),
      ev({ type: "usage", input_tokens: 20, output_tokens: 2, cost_usd: 0.002 }),
      ev({ type: "turn_completed", text: "Done now." }),
    ]);
    expect(t.turns).toHaveLength(1);
    const turn = t.turns[0];
    expect(turn.state).toBe("completed");
    expect(turn.prompt).toBe("write it");
    expect(turn.iterations).toBe(2);
    expect(turn.input_tokens).toBe(32);
    expect(turn.cost_usd).toBeCloseTo(0.003);
    expect(turn.items.map((i) => i.kind)).toEqual(["model", "tool", "model", "text"]);
    const tool = turn.items[1];
    expect(tool.kind === "tool" && tool.state).toBe("ok");
    expect(tool.kind === "tool" && tool.decision).toBe("approve_once");
    const text = turn.items[3];
    expect(text.kind === "text" && text.text).toBe("Done now.");
    const model = turn.items[0];
    expect(model.kind === "model" && model.latency_ms).toBe(100);
  });

  it("a denied call stays denied when its refusal result arrives", () => {
    const t = replay([
      started(),
      ev({ type: "tool_call", id: "c1", name: "file_write", arguments: "{}" }),
      ev({ type: "approval_requested", id: "c1", tool: "file_write", arguments: "{}", reason: "r" }),
      ev({ type: "approval_resolved", id: "c1", decision: "deny", message: "not now" }),
      ev({ type: "tool_result", id: "c1", ok: false, output: "the user denied this call: not now", duration_ms: 0, receipt_id: null }),
    ]);
    const tool = t.turns[0].items[0];
    expect(tool.kind === "tool" && tool.state).toBe("denied");
    expect(tool.kind === "tool" && tool.message).toBe("not now");
  });
});

describe("the stream: snapshot, held frames and gaps", () => {
  it("holds frames that arrive before the snapshot and drops the ones it already has", () => {
    const all = frames([
      started(),
      ev({ type: "text_delta", text: "a" }),
      ev({ type: "text_delta", text: "b" }),
      ev({ type: "text_delta", text: "c" }),
    ]);
    const s = emptyStream();
    // Frames 3 and 4 arrive on the channel before the subscribe answer (snapshot up to 3).
    onFrame(s, all[2]);
    onFrame(s, all[3]);
    expect(s.timeline.turns).toHaveLength(0);
    onSnapshot(s, snapshot(all.slice(0, 3), 3));
    const text = s.timeline.turns[0].items[0];
    expect(text.kind === "text" && text.text).toBe("abc");
    expect(s.lastSeq).toBe(4);
    expect(s.timeline.lost).toBe(0);
    // A duplicate is ignored.
    onFrame(s, all[3]);
    expect(text.kind === "text" && s.timeline.turns[0].items[0].kind === "text" && (s.timeline.turns[0].items[0] as { text: string }).text).toBe("abc");
  });

  it("a gap in seq leaves a marker with the number of frames lost", () => {
    const all = frames([started(), ev({ type: "text_delta", text: "a" }), ev({ type: "text_delta", text: "b" }), ev({ type: "text_delta", text: "c" })]);
    const s = emptyStream();
    onSnapshot(s, snapshot(all.slice(0, 1), 1));
    onFrame(s, all[3]);
    expect(s.timeline.lost).toBe(2);
    const kinds = s.timeline.turns[0].items.map((i) => i.kind);
    expect(kinds).toEqual(["lost", "text"]);
    const lost = s.timeline.turns[0].items[0];
    expect(lost.kind === "lost" && lost.count).toBe(2);
  });

  it("a truncated snapshot says earlier frames are not shown", () => {
    const all = frames([ev({ type: "text_delta", text: "late" })], 500);
    const s = emptyStream();
    onSnapshot(s, snapshot(all, 500, true));
    expect(s.timeline.turns[0].items[0].kind).toBe("lost");
    expect(s.lastSeq).toBe(500);
  });

  it("frames of a new turn start a new turn", () => {
    const s = emptyStream();
    onSnapshot(s, snapshot([], 0));
    for (const f of frames([started("t1"), ev({ type: "turn_completed", text: "x" }, "t1"), started("t2")])) onFrame(s, f);
    expect(s.timeline.turns.map((t) => t.turn_id)).toEqual(["t1", "t2"]);
    expect(s.timeline.turns[1].state).toBe("running");
  });
});
