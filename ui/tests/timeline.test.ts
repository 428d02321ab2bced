import { describe, expect, it } from "vitest";
import type { LiveFrame, LiveSnapshot, TurnEvent } from "../src/bindings";
import {
  currentTurn,
  emptyStream,
  MAX_REPLAY_DEPTH,
  onFrame,
  onSnapshot,
  ownRunning,
  replay,
  withSubTurns,
} from "../src/lib/timeline";

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

const started = (turn = "t1") =>
  ev({ type: "turn_started", session_id: "s1", trigger: "user", prompt: "write it" }, turn);

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
      ev({
        type: "tool_result",
        id: "c1",
        ok: false,
        output: "the user denied this call: not now",
        duration_ms: 0,
        receipt_id: null,
      }),
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
    expect(
      text.kind === "text" &&
        s.timeline.turns[0].items[0].kind === "text" &&
        (s.timeline.turns[0].items[0] as { text: string }).text,
    ).toBe("abc");
  });

  it("a gap in seq leaves a marker with the number of frames lost", () => {
    const all = frames([
      started(),
      ev({ type: "text_delta", text: "a" }),
      ev({ type: "text_delta", text: "b" }),
      ev({ type: "text_delta", text: "c" }),
    ]);
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
    for (const f of frames([started("t1"), ev({ type: "turn_completed", text: "x" }, "t1"), started("t2")]))
      onFrame(s, f);
    expect(s.timeline.turns.map((t) => t.turn_id)).toEqual(["t1", "t2"]);
    expect(s.timeline.turns[1].state).toBe("running");
  });
});

// A SubAgent's events: `agent` runs the child turn `turn`, nested under `call` of parent turn t1.
function sub(
  kind: Record<string, unknown> & { type: string },
  turn = "u1",
  agent = "bob",
  parent: { turn_id: string; call_id: string; agent: string } = { turn_id: "t1", call_id: "d1", agent: "alice" },
): TurnEvent {
  return { ...ev(kind, turn), agent, parent } as TurnEvent;
}

const delegateCall = (id = "d1", turn = "t1") =>
  ev({ type: "tool_call", id, name: "delegate", arguments: '{"agent":"bob","prompt":"look"}' }, turn);
const subStarted = (turn = "u1", agent = "bob", parent?: { turn_id: string; call_id: string; agent: string }) =>
  sub({ type: "turn_started", session_id: "s2", trigger: "delegate", prompt: "look" }, turn, agent, parent);

/** The one delegate card of the timeline's first turn. */
function card(t: { turns: { items: unknown[] }[] }, index = 0) {
  const tools = t.turns[0].items.filter(
    (i) => (i as { kind: string }).kind === "tool",
  ) as import("../src/lib/timeline").ToolItem[];
  return tools[index];
}

describe("a delegated child turn", () => {
  it("nests under the parent's delegate card, in order, with its state, text and tool calls", () => {
    const s = emptyStream();
    onSnapshot(s, snapshot([], 0));
    const all = frames([
      started(),
      delegateCall(),
      subStarted(),
      sub({ type: "model_request", route_entry: "openai.fake", attempt: 1, iteration: 1 }),
      sub({ type: "tool_call", id: "b1", name: "file_read", arguments: "{}" }),
      sub({ type: "tool_result", id: "b1", ok: true, output: "notes", duration_ms: 2, receipt_id: null }),
      sub({ type: "text_delta", text: "found " }),
      sub({ type: "text_delta", text: "it" }),
    ]);
    for (const f of all) onFrame(s, f);
    expect(s.timeline.turns.map((t) => t.turn_id)).toEqual(["t1"]);
    const d = card(s.timeline);
    expect(d.name).toBe("delegate");
    expect(d.state).toBe("running");
    expect(d.children).toHaveLength(1);
    const child = d.children[0];
    expect(child.agent).toBe("bob");
    expect(child.state).toBe("running");
    expect(child.prompt).toBe("look");
    expect(child.items.map((i) => i.kind)).toEqual(["model", "tool", "text"]);
    const tool = child.items[1];
    expect(tool.kind === "tool" && [tool.name, tool.state]).toEqual(["file_read", "ok"]);
    const text = child.items[2];
    expect(text.kind === "text" && text.text).toBe("found it");
    // The child ends, then the parent's result names it and the parent answers.
    onFrame(s, { agent: "alice", seq: 9, event: sub({ type: "turn_completed", text: "found it" }) });
    onFrame(s, {
      agent: "alice",
      seq: 10,
      event: ev({
        type: "tool_result",
        id: "d1",
        ok: true,
        output: "{}",
        duration_ms: 9,
        receipt_id: null,
        sub_turn_id: "u1",
      }),
    });
    onFrame(s, { agent: "alice", seq: 11, event: ev({ type: "text_delta", text: "bob found it" }) });
    expect(child.state).toBe("completed");
    expect(child.final_text).toBe("found it");
    expect(d.state).toBe("ok");
    expect(d.sub_turn_id).toBe("u1");
    expect(s.timeline.turns[0].items.map((i) => i.kind)).toEqual(["tool", "text"]);
    expect(s.timeline.turns[0].state).toBe("running");
  });

  it("a failed or cancelled child shows so under its card", () => {
    const t = replay([
      started(),
      delegateCall("d1"),
      subStarted("u1"),
      sub({ type: "turn_failed", code: "provider_error", message: "down" }, "u1"),
      delegateCall("d2"),
      subStarted("u2", "bob", { turn_id: "t1", call_id: "d2", agent: "alice" }),
      sub({ type: "turn_cancelled" }, "u2", "bob", { turn_id: "t1", call_id: "d2", agent: "alice" }),
    ]);
    expect(card(t, 0).children.map((c) => [c.turn_id, c.state, c.error?.code ?? null])).toEqual([
      ["u1", "failed", "provider_error"],
    ]);
    expect(card(t, 1).children.map((c) => [c.turn_id, c.state])).toEqual([["u2", "cancelled"]]);
  });

  it("nests when an agent delegates to itself, and a grandchild nests under the child's card", () => {
    const t = replay([
      started(),
      delegateCall(),
      subStarted("t2", "alice"),
      sub({ type: "tool_call", id: "d9", name: "delegate", arguments: "{}" }, "t2", "alice"),
      subStarted("u1", "bob", { turn_id: "t2", call_id: "d9", agent: "alice" }),
      sub({ type: "text_delta", text: "deep" }, "u1", "bob", { turn_id: "t2", call_id: "d9", agent: "alice" }),
      sub({ type: "turn_completed", text: "mid" }, "t2", "alice"),
    ]);
    expect(t.turns).toHaveLength(1);
    const child = card(t).children[0];
    expect([child.turn_id, child.agent, child.state]).toEqual(["t2", "alice", "completed"]);
    const inner = child.items[0];
    expect(
      inner.kind === "tool" && inner.children.map((c) => [c.agent, c.items[0].kind === "text" && c.items[0].text]),
    ).toEqual([["bob", "deep"]]);
  });

  it("in the child's own stream (no card to hang under) the turn is a top-level one", () => {
    const t = replay([subStarted(), sub({ type: "text_delta", text: "hi" })]);
    expect(t.turns.map((x) => [x.turn_id, x.agent])).toEqual([["u1", "bob"]]);
    expect(t.turns[0].items[0].kind).toBe("text");
  });

  it("child frames held while subscribing nest once, after the snapshot", () => {
    const all = frames([
      started(),
      delegateCall(),
      subStarted(),
      sub({ type: "text_delta", text: "a" }),
      sub({ type: "text_delta", text: "b" }),
      sub({ type: "text_delta", text: "c" }),
    ]);
    const s = emptyStream();
    // Frames 4..6 reach the channel before the subscribe answer, whose snapshot ends at 4.
    onFrame(s, all[3]);
    onFrame(s, all[4]);
    onFrame(s, all[5]);
    expect(s.timeline.turns).toHaveLength(0);
    onSnapshot(s, snapshot(all.slice(0, 4), 4));
    expect(s.lastSeq).toBe(6);
    expect(s.timeline.lost).toBe(0);
    const child = card(s.timeline).children[0];
    expect(child.items.map((i) => i.kind === "text" && i.text)).toEqual(["abc"]);
    expect(s.timeline.turns).toHaveLength(1);
  });
});

describe("replaying a turn that delegated", () => {
  it("loads the child turns its delegate results name and nests them", async () => {
    const parent = [
      started(),
      delegateCall(),
      ev({
        type: "tool_result",
        id: "d1",
        ok: true,
        output: "{}",
        duration_ms: 5,
        receipt_id: null,
        sub_turn_id: "u1",
      }),
      ev({ type: "tool_call", id: "d2", name: "delegate", arguments: "{}" }),
      ev({
        type: "tool_result",
        id: "d2",
        ok: false,
        output: "gone",
        duration_ms: 5,
        receipt_id: null,
        sub_turn_id: "u-missing",
      }),
      ev({ type: "turn_completed", text: "done" }),
    ];
    const stored: Record<string, TurnEvent[]> = {
      u1: [
        subStarted(),
        sub({ type: "tool_call", id: "b1", name: "delegate", arguments: "{}" }),
        sub({
          type: "tool_result",
          id: "b1",
          ok: true,
          output: "{}",
          duration_ms: 1,
          receipt_id: null,
          sub_turn_id: "v1",
        }),
        sub({ type: "turn_completed", text: "from bob" }),
      ],
      v1: [
        subStarted("v1", "carol", { turn_id: "u1", call_id: "b1", agent: "bob" }),
        sub({ type: "turn_completed", text: "from carol" }, "v1", "carol", {
          turn_id: "u1",
          call_id: "b1",
          agent: "bob",
        }),
      ],
    };
    const asked: string[] = [];
    const events = await withSubTurns(parent, async (id) => {
      asked.push(id);
      if (!stored[id]) throw new Error("not found");
      return stored[id];
    });
    expect(asked).toEqual(["u1", "v1", "u-missing"]);
    const t = replay(events);
    expect(t.turns).toHaveLength(1);
    expect(t.turns[0].state).toBe("completed");
    const child = card(t, 0).children[0];
    expect([child.agent, child.state, child.final_text]).toEqual(["bob", "completed", "from bob"]);
    const inner = child.items[0];
    expect(inner.kind === "tool" && inner.children.map((c) => [c.agent, c.final_text])).toEqual([
      ["carol", "from carol"],
    ]);
    expect(card(t, 1).children).toEqual([]);
    expect(card(t, 1).state).toBe("failed");
  });

  it("follows delegations at most MAX_REPLAY_DEPTH deep and loads a named turn once", async () => {
    // A chain c0 -> c1 -> ... where every child delegates again, and c3 names c1 a second time.
    const link = (next: string) =>
      ev({ type: "tool_result", id: "d", ok: true, output: "{}", duration_ms: 1, receipt_id: null, sub_turn_id: next });
    const asked: string[] = [];
    await withSubTurns([link("c0")], async (id) => {
      asked.push(id);
      const n = Number(id.slice(1));
      return n === 3 ? [link("c1"), link("c4")] : [link(`c${n + 1}`)];
    });
    expect(asked).toEqual(Array.from({ length: MAX_REPLAY_DEPTH }, (_, i) => `c${i}`));
  });
});

describe("turns running at once in one agent's stream", () => {
  // bob's stream: bob's own turn b1 and the SubAgent turn u1 alice delegated to bob (no card of
  // alice's in bob's stream: a top-level turn), their frames interleaved.
  const own = (kind: Record<string, unknown> & { type: string }) => ({ ...ev(kind, "b1"), agent: "bob" }) as TurnEvent;
  const bobFrames = (events: TurnEvent[], from = 1): LiveFrame[] =>
    events.map((event, i) => ({ agent: "bob", seq: from + i, event }));
  const interleaved = () => [
    own({ type: "turn_started", session_id: "s-bob", trigger: "user", prompt: "own work" }),
    own({ type: "text_delta", text: "mine " }),
    subStarted(),
    sub({ type: "text_delta", text: "for " }),
    own({ type: "tool_call", id: "c1", name: "file_write", arguments: "{}" }),
    sub({ type: "text_delta", text: "alice" }),
    own({ type: "approval_requested", id: "c1", tool: "file_write", arguments: "{}", reason: "writes" }),
    sub({ type: "turn_completed", text: "for alice" }),
    own({ type: "text_delta", text: "still mine" }),
  ];

  it("each turn keeps its own items and state", () => {
    const s = emptyStream();
    onSnapshot(s, { agent: "bob", status: "waiting_for_approval", last_seq: 0, frames: [], truncated: false });
    for (const f of bobFrames(interleaved())) onFrame(s, f);
    const [b1, u1] = s.timeline.turns;
    expect(s.timeline.turns.map((t) => [t.turn_id, t.agent, t.delegated_by, t.state])).toEqual([
      ["b1", "bob", null, "running"],
      ["u1", "bob", "alice", "completed"],
    ]);
    expect(b1.prompt).toBe("own work");
    expect(
      b1.items.map((i) => (i.kind === "text" ? i.text : i.kind === "tool" ? `${i.name}:${i.state}` : i.kind)),
    ).toEqual(["mine ", "file_write:waiting", "still mine"]);
    expect(u1.items.map((i) => i.kind === "text" && i.text)).toEqual(["for alice"]);
    expect(u1.final_text).toBe("for alice");
    // The agent's own turn still runs after the later SubAgent turn ended.
    expect(ownRunning(s.timeline).map((t) => t.turn_id)).toEqual(["b1"]);
    expect(currentTurn(s.timeline)?.turn_id).toBe("b1");
  });

  it("a snapshot holding both rebuilds the same timeline", () => {
    const s = emptyStream();
    const fs = bobFrames(interleaved());
    onSnapshot(s, { agent: "bob", status: "waiting_for_approval", last_seq: fs.length, frames: fs, truncated: false });
    expect(s.timeline.turns.map((t) => [t.turn_id, t.state, t.items.length])).toEqual([
      ["b1", "running", 3],
      ["u1", "completed", 1],
    ]);
    expect(s.lastSeq).toBe(9);
  });

  it("a truncated snapshot marks the turn whose start it lost, not the first one", () => {
    const s = emptyStream();
    // u1's start was dropped while b1's is still held (b1 started after u1).
    const fs = bobFrames(
      [
        own({ type: "turn_started", session_id: "s-bob", trigger: "user", prompt: "own work" }),
        sub({ type: "text_delta", text: "late" }),
        own({ type: "text_delta", text: "mine" }),
      ],
      40,
    );
    onSnapshot(s, { agent: "bob", status: "working", last_seq: 42, frames: fs, truncated: true });
    const [b1, u1] = s.timeline.turns;
    expect(b1.items.map((i) => i.kind)).toEqual(["text"]);
    expect(u1.items.map((i) => i.kind)).toEqual(["lost", "text"]);
  });

  it("with no own turn running, the meters follow the newest running turn", () => {
    const t = replay([
      own({ type: "turn_started", session_id: "s-bob", trigger: "user", prompt: "own work" }),
      subStarted(),
      own({ type: "turn_completed", text: "done" }),
    ]);
    expect(ownRunning(t)).toEqual([]);
    expect(currentTurn(t)?.turn_id).toBe("u1");
  });
});
