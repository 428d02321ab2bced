// The turn timeline: a pure reducer from runtime events (live frames or stored events) to
// turns with their items, and the stream logic around it: frames that arrive before the
// snapshot are held, frames the snapshot already holds are dropped, and a gap in `seq` leaves
// a visible "frames lost" marker. A SubAgent turn (its events name a parent `delegate` call)
// nests under that call's card, in the live stream as in a replay. Events are grouped by their
// turn, so turns running at once (an agent's own turn and a SubAgent turn it runs for another
// agent) interleave in the stream and each keeps its own items.

import type { ApprovalDecision, LiveFrame, LiveSnapshot, TurnEvent, TurnState, TurnTrigger } from "../bindings";

/** Where a turn stands: the same states as a stored turn's. */
export type { TurnState };

/** A provider request and, once its usage arrives, tokens, cost and latency. */
export interface ModelItem {
  kind: "model";
  key: number;
  route_entry: string;
  attempt: number;
  iteration: number;
  time: string;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  latency_ms: number | null;
}

/** Streamed assistant text. */
export interface TextItem {
  kind: "text";
  key: number;
  text: string;
}

/** Where a tool call stands. */
export type ToolState = "running" | "waiting" | "ok" | "failed" | "denied";

/** A tool call with its approval and result. */
export interface ToolItem {
  kind: "tool";
  key: number;
  id: string;
  name: string;
  arguments: string;
  state: ToolState;
  reason: string | null;
  decision: ApprovalDecision | null;
  message: string | null;
  duration_ms: number | null;
  output: string | null;
  receipt_id: string | null;
  /** For a `delegate` call: the SubAgent turn it ran, once its result names it. */
  sub_turn_id: string | null;
  /** For a `delegate` call: the child turns nested under it, in order. */
  children: Turn[];
}

/** A notice from the runtime. */
export interface NoticeItem {
  kind: "notice";
  key: number;
  code: string;
  message: string;
}

/** Frames that never reached the view. */
export interface LostItem {
  kind: "lost";
  key: number;
  count: number;
}

export type Item = ModelItem | TextItem | ToolItem | NoticeItem | LostItem;

/** One turn as the timeline shows it. */
export interface Turn {
  turn_id: string;
  /** The agent running the turn (a child's differs from its parent's). */
  agent: string;
  /** For a SubAgent turn: the agent that delegated it (cancelling the turn's agent does not
   * stop it; cancelling this one does). */
  delegated_by: string | null;
  session_id: string | null;
  trigger: TurnTrigger | null;
  prompt: string | null;
  started: string;
  state: TurnState;
  final_text: string | null;
  error: { code: string; message: string } | null;
  items: Item[];
  /** The highest tool round reached. */
  iterations: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

/** Turns, in the order they first appeared. */
export interface Timeline {
  turns: Turn[];
  /** Frames lost in total (each loss also leaves a marker in its turn). */
  lost: number;
  nextKey: number;
}

export function emptyTimeline(): Timeline {
  return { turns: [], lost: 0, nextKey: 1 };
}

function turnFor(turns: Turn[], ev: TurnEvent): Turn {
  let turn = turns.find((x) => x.turn_id === ev.turn_id);
  if (!turn) {
    turn = {
      turn_id: ev.turn_id,
      agent: ev.agent,
      delegated_by: ev.parent?.agent ?? null,
      session_id: null,
      trigger: null,
      prompt: null,
      started: ev.time,
      state: "running",
      final_text: null,
      error: null,
      items: [],
      iterations: 0,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
    };
    turns.push(turn);
    turn = turns[turns.length - 1];
  }
  return turn;
}

/** The card of call `callId` of turn `turnId`, searched in `turns` and the turns nested in them. */
function findCall(turns: Turn[], turnId: string, callId: string): ToolItem | undefined {
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i];
    if (turn.turn_id === turnId) {
      const tool = toolItem(turn, callId);
      if (tool) return tool;
    }
    for (const it of turn.items) {
      if (it.kind === "tool" && it.children.length > 0) {
        const found = findCall(it.children, turnId, callId);
        if (found) return found;
      }
    }
  }
  return undefined;
}

function toolItem(turn: Turn, id: string): ToolItem | undefined {
  for (let i = turn.items.length - 1; i >= 0; i--) {
    const it = turn.items[i];
    if (it.kind === "tool" && it.id === id) return it;
  }
  return undefined;
}

function lastModel(turn: Turn): ModelItem | undefined {
  for (let i = turn.items.length - 1; i >= 0; i--) {
    const it = turn.items[i];
    if (it.kind === "model") return it;
  }
  return undefined;
}

/** Applies one runtime event to the timeline (mutating it). A SubAgent's event goes to its turn
 * under the parent's `delegate` card when the timeline has that card; otherwise (the child's own
 * stream, or a card the view never saw) its turn is a top-level one. */
export function applyEvent(t: Timeline, ev: TurnEvent): void {
  const card = ev.parent ? findCall(t.turns, ev.parent.turn_id, ev.parent.call_id) : undefined;
  const turn = turnFor(card ? card.children : t.turns, ev);
  const key = t.nextKey++;
  switch (ev.type) {
    case "turn_started":
      turn.session_id = ev.session_id;
      turn.trigger = ev.trigger;
      turn.prompt = ev.prompt;
      turn.started = ev.time;
      break;
    case "model_request":
      turn.iterations = Math.max(turn.iterations, ev.iteration);
      turn.items.push({
        kind: "model",
        key,
        route_entry: ev.route_entry,
        attempt: ev.attempt,
        iteration: ev.iteration,
        time: ev.time,
        input_tokens: null,
        output_tokens: null,
        cost_usd: null,
        latency_ms: null,
      });
      break;
    case "text_delta": {
      const last = turn.items[turn.items.length - 1];
      if (last && last.kind === "text") last.text += ev.text;
      else turn.items.push({ kind: "text", key, text: ev.text });
      break;
    }
    case "tool_call":
      turn.items.push({
        kind: "tool",
        key,
        id: ev.id,
        name: ev.name,
        arguments: ev.arguments,
        state: "running",
        reason: null,
        decision: null,
        message: null,
        duration_ms: null,
        output: null,
        receipt_id: null,
        sub_turn_id: null,
        children: [],
      });
      break;
    case "approval_requested": {
      const tool = toolItem(turn, ev.id);
      if (tool) {
        tool.state = "waiting";
        tool.reason = ev.reason;
      }
      break;
    }
    case "approval_resolved": {
      const tool = toolItem(turn, ev.id);
      if (tool) {
        tool.decision = ev.decision;
        tool.message = ev.message;
        tool.state = ev.decision === "deny" ? "denied" : "running";
      }
      break;
    }
    case "tool_result": {
      const tool = toolItem(turn, ev.id);
      if (tool) {
        if (tool.state !== "denied") tool.state = ev.ok ? "ok" : "failed";
        tool.duration_ms = ev.duration_ms;
        tool.output = ev.output;
        tool.receipt_id = ev.receipt_id;
        tool.sub_turn_id = ev.sub_turn_id ?? null;
      }
      break;
    }
    case "usage": {
      turn.input_tokens += ev.input_tokens;
      turn.output_tokens += ev.output_tokens;
      turn.cost_usd += ev.cost_usd ?? 0;
      const model = lastModel(turn);
      if (model && model.input_tokens === null) {
        model.input_tokens = ev.input_tokens;
        model.output_tokens = ev.output_tokens;
        model.cost_usd = ev.cost_usd ?? 0;
        const ms = Date.parse(ev.time) - Date.parse(model.time);
        model.latency_ms = Number.isFinite(ms) ? Math.max(0, ms) : null;
      }
      break;
    }
    case "notice":
      turn.items.push({ kind: "notice", key, code: ev.code, message: ev.message });
      break;
    case "turn_completed":
      turn.state = "completed";
      turn.final_text = ev.text;
      break;
    case "turn_failed":
      turn.state = "failed";
      turn.error = { code: ev.code, message: ev.message };
      break;
    case "turn_cancelled":
      turn.state = "cancelled";
      for (const it of turn.items) {
        if (it.kind === "tool" && (it.state === "running" || it.state === "waiting")) it.state = "failed";
      }
      break;
  }
}

/** A timeline rebuilt from stored events (replay of an earlier turn). */
export function replay(events: TurnEvent[]): Timeline {
  const t = emptyTimeline();
  for (const ev of events) applyEvent(t, ev);
  return t;
}

/** How deep a replay follows delegations (a turn's children, theirs, ...). */
export const MAX_REPLAY_DEPTH = 8;

/**
 * A stored turn's events with the stored events of every SubAgent turn its `delegate` results
 * name spliced in before each result (recursively), so `replay` nests them as the live stream
 * did. A child turn that cannot be loaded is left out: its card still shows the result.
 */
export async function withSubTurns(
  events: TurnEvent[],
  load: (turnId: string) => Promise<TurnEvent[]>,
  depth = 0,
  seen: Set<string> = new Set(),
): Promise<TurnEvent[]> {
  const out: TurnEvent[] = [];
  for (const ev of events) {
    if (ev.type === "tool_result" && ev.sub_turn_id && depth < MAX_REPLAY_DEPTH && !seen.has(ev.sub_turn_id)) {
      seen.add(ev.sub_turn_id);
      try {
        const child = await load(ev.sub_turn_id);
        out.push(...(await withSubTurns(child, load, depth + 1, seen)));
      } catch {
        // Left out: the parent's card still shows the child's answer or error.
      }
    }
    out.push(ev);
  }
  return out;
}

function markLost(t: Timeline, count: number): void {
  t.lost += count;
  const turn = t.turns[t.turns.length - 1];
  const item: LostItem = { kind: "lost", key: t.nextKey++, count };
  if (turn) turn.items.push(item);
  else
    t.turns.push({
      turn_id: "",
      agent: "",
      delegated_by: null,
      session_id: null,
      trigger: null,
      prompt: null,
      started: "",
      state: "running",
      final_text: null,
      error: null,
      items: [item],
      iterations: 0,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
    });
}

/** The turns of the stream's own agent running now that cancelling it stops (not the SubAgent
 * turns it runs for another agent), oldest first. */
export function ownRunning(t: Timeline): Turn[] {
  return t.turns.filter((x) => x.state === "running" && x.delegated_by === null && x.turn_id !== "");
}

/** The turn a view's meters follow: the newest of the agent's own turns running, else the newest
 * running turn, else the newest turn. */
export function currentTurn(t: Timeline): Turn | null {
  const own = ownRunning(t);
  if (own.length > 0) return own[own.length - 1];
  const running = t.turns.filter((x) => x.state === "running" && x.turn_id !== "");
  if (running.length > 0) return running[running.length - 1];
  return t.turns.length > 0 ? t.turns[t.turns.length - 1] : null;
}

/** An agent's live stream as a view holds it. */
export interface Stream {
  /** False until the snapshot arrived; frames are held until then. */
  synced: boolean;
  /** The `seq` of the last frame applied (or held by the snapshot). */
  lastSeq: number;
  held: LiveFrame[];
  timeline: Timeline;
}

export function emptyStream(): Stream {
  return { synced: false, lastSeq: 0, held: [], timeline: emptyTimeline() };
}

/** Takes one frame from the channel (mutating the stream). */
export function onFrame(s: Stream, f: LiveFrame): void {
  if (!s.synced) {
    s.held.push(f);
    return;
  }
  if (f.seq <= s.lastSeq) return;
  if (f.seq > s.lastSeq + 1) markLost(s.timeline, f.seq - s.lastSeq - 1);
  s.lastSeq = f.seq;
  applyEvent(s.timeline, f.event);
}

/**
 * True when `f` shows frames were lost between the backend and the view (its `seq` skips).
 * The view then holds `f`, takes a fresh snapshot and applies it with `onSnapshot`, so the lost
 * frames come back; only if that fails does `resyncFailed` leave a "frames lost" marker.
 */
export function startResync(s: Stream, f: LiveFrame): boolean {
  if (!s.synced || f.seq <= s.lastSeq + 1) return false;
  s.synced = false;
  s.held.push(f);
  return true;
}

/** The fresh snapshot could not be taken: mark the gap and go on with the frames held. */
export function resyncFailed(s: Stream): void {
  s.synced = true;
  const held = s.held;
  s.held = [];
  for (const f of held) onFrame(s, f);
}

/** Applies a snapshot (taken when the view subscribed, or after a gap), then the frames held
 * meanwhile. */
export function onSnapshot(s: Stream, snap: LiveSnapshot): void {
  s.timeline = emptyTimeline();
  for (const f of snap.frames) applyEvent(s.timeline, f.event);
  if (snap.truncated) {
    // The buffer dropped a turn's earliest frames (its start first): say so where they would
    // have been, in each turn the snapshot holds without its start.
    const cut = s.timeline.turns.filter((x) => x.prompt === null);
    const first = s.timeline.turns[0];
    for (const turn of cut.length > 0 ? cut : first ? [first] : []) {
      turn.items.unshift({ kind: "lost", key: s.timeline.nextKey++, count: 0 });
    }
  }
  s.lastSeq = snap.last_seq;
  s.synced = true;
  const held = s.held;
  s.held = [];
  for (const f of held) onFrame(s, f);
}
