// The Live screen's state for one agent: its frame stream (subscribe + snapshot), meters,
// stored turns and replay, its chat sessions (pick one to read and continue it, or start a new
// chat), the chat prompt, approvals and abort, and the agent's recent refused connections
// (network by domain), all through the typed commands.

import { Channel } from "@tauri-apps/api/core";
import {
  commands,
  type AgentLifecycleChange,
  type AgentMeters,
  type ApiError,
  type ApprovalDecision,
  type LiveFrame,
  type NetworkConnectionView,
  type SessionView,
  type TurnSummary,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import {
  emptyStream,
  emptyTimeline,
  onFrame,
  onSnapshot,
  ownRunning,
  replay,
  resyncFailed,
  startResync,
  withSubTurns,
  type Stream,
  type Timeline,
  type Turn,
} from "./timeline";
import { unwrap } from "./result";

export type LiveApi = Pick<
  typeof commands,
  | "liveSubscribe"
  | "liveUnsubscribe"
  | "liveSnapshot"
  | "sendPrompt"
  | "answerApproval"
  | "cancelTurn"
  | "agentMeters"
  | "agentTurns"
  | "agentSessions"
  | "sessionTurns"
  | "turnEvents"
  | "networkLog"
>;

/** How many refused connections the Live screen notes, and how far back (ms). */
export const REFUSED_SHOWN = 3;
export const REFUSED_WITHIN_MS = 24 * 3600 * 1000;

/** Makes the channel frames arrive on; the app uses Tauri's `Channel`. */
export type ChannelFactory = (onmessage: (f: LiveFrame) => void) => Channel<LiveFrame>;

const tauriChannel: ChannelFactory = (onmessage) => {
  const c = new Channel<LiveFrame>();
  c.onmessage = onmessage;
  return c;
};

/** What the conversation pane shows: every turn the stream carried since the agent was opened,
 * one chat session (its stored turns, then those the stream carries), or a new chat (the turns
 * that began since "New chat" was chosen). */
export type ChatView =
  { kind: "all" } | { kind: "session"; id: string; stored: Timeline } | { kind: "new"; from: number };

/** The turns `view` shows of the stream `live`: a session's stored turns the stream does not
 * hold come first. */
export function shownTurns(view: ChatView, live: Timeline): Turn[] {
  switch (view.kind) {
    case "all":
      return live.turns;
    case "new":
      return live.turns.slice(view.from);
    case "session": {
      const inStream = live.turns.map((t) => t.turn_id);
      return [
        ...view.stored.turns.filter((t) => !inStream.includes(t.turn_id)),
        ...live.turns.filter((t) => t.session_id === view.id),
      ];
    }
  }
}

export class LiveStore {
  agent = $state<string | null>(null);
  stream = $state<Stream>(emptyStream());
  meters = $state<AgentMeters | null>(null);
  /** The agent's newest refused connections of the last day (its network is by domain). */
  refused = $state<NetworkConnectionView[]>([]);
  history = $state<TurnSummary[]>([]);
  /** A stored turn being replayed instead of the live stream. */
  replaying = $state<{ turn: TurnSummary; timeline: Timeline } | null>(null);
  /** The chat session prompts continue (at first the agent's last own turn's; null: the next
   * prompt starts a new session). */
  session = $state<string | null>(null);
  /** The agent's sessions, newest first. */
  sessions = $state<SessionView[]>([]);
  /** What the conversation pane shows. */
  view = $state<ChatView>({ kind: "all" });
  sending = $state(false);
  /** The prompt being typed: kept across screens and across a rename of the agent. */
  draft = $state("");
  /** Set when the agent shown was deleted while it was shown (sending is then refused). */
  gone = $state<{ alias: string; kind: "delete" } | null>(null);
  error = $state<ApiError | null>(null);

  /** True while one of the agent's own turns runs (what aborting cancels), also when a SubAgent
   * turn it runs for another agent started or ended since. */
  running = $derived(ownRunning(this.stream.timeline).length > 0);

  #api: LiveApi;
  #channel: ChannelFactory;
  #subscription: number | null = null;
  /** The prompt being sent with no session (a new chat), until its turn names its session. */
  #sendingNew: string | null = null;
  #generation = 0;

  constructor(api: LiveApi = commands, channel: ChannelFactory = tauriChannel) {
    this.#api = api;
    this.#channel = channel;
  }

  /** Follows `agent`'s stream (ending the previous subscription). */
  async open(agent: string): Promise<void> {
    await this.close();
    const generation = ++this.#generation;
    this.agent = agent;
    this.stream = emptyStream();
    this.replaying = null;
    this.session = null;
    this.sessions = [];
    this.refused = [];
    this.view = { kind: "all" };
    this.error = null;
    this.gone = null;
    const stream = this.stream;
    const channel = this.#channel((f) => {
      if (generation === this.#generation) {
        if (startResync(stream, f)) void this.#resync(agent, stream, generation);
        else onFrame(stream, f);
      }
      if (f.event.type === "usage" || f.event.type === "tool_result" || f.event.type === "turn_completed") {
        void this.refreshMeters();
      }
      // A command's refused connection is recorded by the time its result arrives (or soon
      // after: the turn's end looks again).
      if (f.event.type === "tool_result" || f.event.type === "turn_completed") void this.refreshRefused();
      // A turn that starts may have started a session (a new chat, a cron run): list it. The
      // turn of a prompt sent as a new chat names its session: prompts continue it from now.
      if (f.event.type === "turn_started" && generation === this.#generation) {
        const ev = f.event;
        if (this.#sendingNew !== null && ev.prompt === this.#sendingNew && ev.trigger === "user" && !ev.parent) {
          this.#sendingNew = null;
          this.#adopt(ev.session_id);
        }
        void this.refreshSessions();
      }
    });
    try {
      const sub = unwrap(await this.#api.liveSubscribe(agent, channel));
      if (generation !== this.#generation) {
        void this.#api.liveUnsubscribe(sub.id);
        return;
      }
      this.#subscription = sub.id;
      onSnapshot(stream, sub.snapshot);
      // Prompts continue the agent's own chat, not a session another agent delegated into.
      const own = stream.timeline.turns.filter((t) => t.delegated_by === null && t.session_id !== null);
      this.session = own[own.length - 1]?.session_id ?? null;
    } catch (e) {
      this.error = toApiError(e);
    }
    await Promise.all([this.refreshMeters(), this.refreshHistory(), this.refreshSessions(), this.refreshRefused()]);
  }

  /** Frames were lost on the way: rebuild the stream from a fresh snapshot. */
  async #resync(agent: string, stream: Stream, generation: number): Promise<void> {
    try {
      const snap = unwrap(await this.#api.liveSnapshot(agent));
      if (generation === this.#generation) onSnapshot(stream, snap);
    } catch {
      if (generation === this.#generation) resyncFailed(stream);
    }
  }

  /** Stops following the stream. */
  async close(): Promise<void> {
    this.#generation++;
    const id = this.#subscription;
    this.#subscription = null;
    if (id !== null) await this.#api.liveUnsubscribe(id).catch(() => {});
  }

  async refreshMeters(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      const m = unwrap(await this.#api.agentMeters(agent));
      if (this.agent === agent) this.meters = m;
    } catch {
      if (this.agent === agent) this.meters = null;
    }
  }

  /** Reads the agent's newest refused connections (none when its network is not by domain:
   *  nothing goes through the proxy). A failure only leaves the note out. */
  async refreshRefused(now: number = Date.now()): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      const rows = unwrap(await this.#api.networkLog(agent, true, REFUSED_SHOWN));
      const recent = rows.filter((r) => now - Date.parse(r.time) < REFUSED_WITHIN_MS);
      if (this.agent === agent) this.refused = recent;
    } catch {
      if (this.agent === agent) this.refused = [];
    }
  }

  async refreshHistory(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      const h = unwrap(await this.#api.agentTurns(agent));
      if (this.agent === agent) this.history = h;
    } catch (e) {
      if (this.agent !== agent) return;
      const error = toApiError(e);
      this.error = error;
      // The agent is gone (deleted or renamed elsewhere): its turns are no longer there to replay.
      if (error.code === "not_found") this.history = [];
    }
  }

  async refreshSessions(): Promise<void> {
    const agent = this.agent;
    if (!agent) return;
    try {
      const list = unwrap(await this.#api.agentSessions(agent));
      if (this.agent === agent) this.sessions = list;
    } catch (e) {
      if (this.agent !== agent) return;
      this.error = toApiError(e);
      if (this.error.code === "not_found") this.sessions = [];
    }
  }

  /** Shows session `id` (its stored turns with their delegated turns nested) and continues it. */
  async pickSession(id: string): Promise<void> {
    const agent = this.agent;
    this.replaying = null;
    this.session = id;
    this.view = { kind: "session", id, stored: emptyTimeline() };
    try {
      const turns = unwrap(await this.#api.sessionTurns(id));
      const events = [];
      for (const t of turns) {
        const own = unwrap(await this.#api.turnEvents(t.id));
        events.push(...(await withSubTurns(own, async (c) => unwrap(await this.#api.turnEvents(c)))));
      }
      if (this.agent === agent && this.view.kind === "session" && this.view.id === id) {
        this.view = { kind: "session", id, stored: replay(events) };
      }
    } catch (e) {
      if (this.agent === agent) this.error = toApiError(e);
    }
  }

  /** Prompts continue session `id` from now; a new chat becomes that session. */
  #adopt(id: string): void {
    this.session = id;
    if (this.view.kind === "new") this.view = { kind: "session", id, stored: emptyTimeline() };
  }

  /** Starts a new chat: the pane empties and the next prompt is sent with no session. */
  newChat(): void {
    this.replaying = null;
    this.session = null;
    this.view = { kind: "new", from: this.stream.timeline.turns.length };
  }

  /** Back to every turn the stream carried (prompts keep continuing the current session). */
  showAll(): void {
    this.replaying = null;
    this.view = { kind: "all" };
  }

  /** Runs `prompt` as a turn (continuing the current session); the stream shows it. False when
   *  it could not be sent (the error says why; the caller keeps the prompt). */
  async send(prompt: string): Promise<boolean> {
    const agent = this.agent;
    if (!agent || prompt.trim() === "" || this.gone) return false;
    this.sending = true;
    this.error = null;
    this.replaying = null;
    let sent = false;
    try {
      this.#sendingNew = this.session === null ? prompt : null;
      const r = unwrap(await this.#api.sendPrompt({ agent, session: this.session, prompt }));
      if (this.agent === agent) this.#adopt(r.session);
      sent = true;
    } catch (e) {
      if (this.agent === agent) this.error = toApiError(e);
    } finally {
      this.sending = false;
      this.#sendingNew = null;
    }
    await Promise.all([this.refreshMeters(), this.refreshHistory(), this.refreshSessions(), this.refreshRefused()]);
    return sent;
  }

  /** Applies the renames, deletes and restores that finished: the alias a rename of the agent
   *  shown gave it (the screen then follows it there), else `null`. A delete of the agent shown
   *  marks it gone; a restore of it brings it back. */
  follow(finished: AgentLifecycleChange[]): string | null {
    let moved: string | null = null;
    for (const f of finished) {
      const shown = moved ?? this.agent;
      if (shown === null || f.alias !== shown) continue;
      if (f.kind === "rename" && f.new_alias) moved = f.new_alias;
      else if (f.kind === "delete") this.gone = { alias: f.alias, kind: "delete" };
      else if (f.kind === "restore") this.gone = null;
    }
    return moved;
  }

  /** Answers a pending approval of this agent: the request of call `callId` in turn `turnId`. */
  async answer(turnId: string, callId: string, decision: ApprovalDecision, message: string | null): Promise<void> {
    try {
      const found = unwrap(await this.#api.answerApproval(turnId, callId, decision, message));
      if (!found) this.error = { code: "not_found", message: "that approval request is no longer waiting" };
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  /** Cancels the running turn. */
  async abort(): Promise<void> {
    if (!this.agent) return;
    try {
      unwrap(await this.#api.cancelTurn(this.agent));
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  /** Replays a stored turn from its events, with the SubAgent turns it delegated nested under
   * their `delegate` cards (null: back to the live stream). */
  async replay(turn: TurnSummary | null): Promise<void> {
    if (turn === null) {
      this.replaying = null;
      return;
    }
    try {
      const own = unwrap(await this.#api.turnEvents(turn.id));
      const events = await withSubTurns(own, async (id) => unwrap(await this.#api.turnEvents(id)));
      this.replaying = { turn, timeline: replay(events) };
    } catch (e) {
      this.error = toApiError(e);
    }
  }
}
