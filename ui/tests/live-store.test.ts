import { describe, expect, it } from "vitest";
import type { Channel } from "@tauri-apps/api/core";
import type { LiveFrame, LiveSubscription, TurnEvent } from "../src/bindings";
import { LiveStore, shownTurns, type LiveApi } from "../src/lib/live.svelte";
import { RuntimeStore, type RuntimeApi, type RuntimeEvents } from "../src/lib/runtime.svelte";

const ok = <T>(data: T) => ({ status: "ok" as const, data });

function event(seq: number, kind: Record<string, unknown> & { type: string }): TurnEvent {
  return { turn_id: "t1", agent: "alice", seq, time: "2026-01-01T00:00:00Z", ...kind } as unknown as TurnEvent;
}

const frame = (seq: number, kind: Record<string, unknown> & { type: string }): LiveFrame => ({
  agent: "alice",
  seq,
  event: event(seq, kind),
});

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("the live store", () => {
  it("frames that beat the subscribe answer are applied once, after the snapshot", async () => {
    let push: (f: LiveFrame) => void = () => {};
    let snapshotCalls = 0;
    let snapshotFails = false;
    const api = {
      liveSnapshot: async () => {
        snapshotCalls++;
        if (snapshotFails) return { status: "error" as const, error: { code: "internal", message: "gone" } };
        return ok({
          agent: "alice",
          status: "working",
          last_seq: 6,
          truncated: false,
          frames: [
            frame(1, { type: "turn_started", session_id: "s1", trigger: "user", prompt: "hi" }),
            frame(2, { type: "text_delta", text: "a" }),
            frame(3, { type: "text_delta", text: "b" }),
            frame(4, { type: "text_delta", text: "c" }),
            frame(5, { type: "text_delta", text: "d" }),
            frame(6, { type: "text_delta", text: "ef" }),
          ],
        });
      },
      liveSubscribe: async (): Promise<{ status: "ok"; data: LiveSubscription }> => {
        // The channel delivers seq 2 and 3 before the command answers with a snapshot up to 2.
        push(frame(2, { type: "text_delta", text: "a" }));
        push(frame(3, { type: "text_delta", text: "b" }));
        return ok({
          id: 7,
          snapshot: {
            agent: "alice",
            status: "working",
            last_seq: 2,
            truncated: false,
            frames: [
              frame(1, { type: "turn_started", session_id: "s1", trigger: "user", prompt: "hi" }),
              frame(2, { type: "text_delta", text: "a" }),
            ],
          },
        });
      },
      liveUnsubscribe: async () => ok(null),
      agentMeters: async () =>
        ok({
          agent: "alice",
          max_tool_iterations: 10,
          cost_today_cents: 0,
          max_cost_per_day_cents: 500,
          actions_last_hour: 0,
          max_actions_per_hour: 20,
        }),
      agentSessions: async () => ok([]),
      sessionTurns: async () => ok([]),
      agentTurns: async () => ok([]),
      sendPrompt: async () =>
        ok({ turn_id: "t1", session: "s1", status: "completed", text: "", error_code: null, error_message: null }),
      answerApproval: async () => ok(true),
      cancelTurn: async () => ok(true),
      turnEvents: async () => ok([]),
    } as unknown as LiveApi;
    const store = new LiveStore(api, (onmessage) => {
      push = onmessage;
      return {} as Channel<LiveFrame>;
    });
    await store.open("alice");
    push(frame(4, { type: "text_delta", text: "c" }));
    const turn = store.stream.timeline.turns[0];
    const text = turn.items[0];
    expect(text.kind === "text" && text.text).toBe("abc");
    expect(store.stream.lastSeq).toBe(4);
    expect(store.stream.timeline.lost).toBe(0);
    expect(store.session).toBe("s1");
    expect(store.running).toBe(true);
    // A frame after a gap: the lost frames come back from a fresh snapshot (no marker), and
    // frames arriving meanwhile are applied after it.
    snapshotCalls = 0;
    push(frame(7, { type: "text_delta", text: "g" }));
    push(frame(8, { type: "turn_completed", text: "abcdefg" }));
    await settle();
    expect(snapshotCalls).toBe(1);
    expect(store.stream.timeline.lost).toBe(0);
    const after = store.stream.timeline.turns[0].items[0];
    expect(after.kind === "text" && after.text).toBe("abcdefg");
    expect(store.stream.lastSeq).toBe(8);
    expect(store.running).toBe(false);
    // When the snapshot cannot be taken, the gap is marked instead.
    snapshotFails = true;
    push(frame(11, { type: "text_delta", text: "late" }));
    await settle();
    expect(store.stream.timeline.lost).toBe(2);
    expect(store.stream.lastSeq).toBe(11);
  });
});

describe("the live store with turns running at once", () => {
  it("stays running while the agent's own turn runs, after a SubAgent turn it ran for another agent ended", async () => {
    let push: (f: LiveFrame) => void = () => {};
    const bob = (seq: number, turn: string, kind: Record<string, unknown> & { type: string }): LiveFrame => ({
      agent: "bob",
      seq,
      event: {
        ...event(seq, kind),
        turn_id: turn,
        agent: "bob",
        ...(turn === "u1" ? { parent: { turn_id: "t1", call_id: "d1", agent: "alice" } } : {}),
      } as TurnEvent,
    });
    const api = {
      liveSubscribe: async (): Promise<{ status: "ok"; data: LiveSubscription }> =>
        ok({
          id: 3,
          snapshot: {
            agent: "bob",
            status: "working",
            last_seq: 3,
            truncated: false,
            frames: [
              bob(1, "b1", { type: "turn_started", session_id: "s-bob", trigger: "user", prompt: "own work" }),
              bob(2, "u1", {
                type: "turn_started",
                session_id: "s-delegated",
                trigger: "delegate",
                prompt: "for alice",
              }),
              bob(3, "b1", { type: "text_delta", text: "mine" }),
            ],
          },
        }),
      liveUnsubscribe: async () => ok(null),
      agentMeters: async () =>
        ok({
          agent: "bob",
          max_tool_iterations: 10,
          cost_today_cents: 0,
          max_cost_per_day_cents: 500,
          actions_last_hour: 0,
          max_actions_per_hour: 20,
        }),
      agentSessions: async () => ok([]),
      sessionTurns: async () => ok([]),
      agentTurns: async () => ok([]),
      turnEvents: async () => ok([]),
    } as unknown as LiveApi;
    const store = new LiveStore(api, (onmessage) => {
      push = onmessage;
      return {} as Channel<LiveFrame>;
    });
    await store.open("bob");
    expect(store.session).toBe("s-bob");
    expect(store.running).toBe(true);
    push(bob(4, "u1", { type: "turn_completed", text: "for alice" }));
    expect(store.stream.timeline.turns.map((t) => [t.turn_id, t.state])).toEqual([
      ["b1", "running"],
      ["u1", "completed"],
    ]);
    expect(store.running).toBe(true);
    push(bob(5, "b1", { type: "turn_completed", text: "mine" }));
    expect(store.running).toBe(false);
  });
});

describe("the live store's turn history", () => {
  it("is emptied when the agent no longer exists, and the error says so", async () => {
    let gone = false;
    const turn = { turn_id: "t1", session_id: "s1", started_at: "2026-01-01T00:00:00Z", status: "completed" };
    const api = {
      liveSubscribe: async () =>
        ok({ id: 1, snapshot: { agent: "alice", status: "idle", last_seq: 0, truncated: false, frames: [] } }),
      liveUnsubscribe: async () => ok(null),
      agentMeters: async () =>
        ok({
          agent: "alice",
          max_tool_iterations: 10,
          cost_today_cents: 0,
          max_cost_per_day_cents: 500,
          actions_last_hour: 0,
          max_actions_per_hour: 20,
        }),
      agentSessions: async () => ok([]),
      sessionTurns: async () => ok([]),
      agentTurns: async () =>
        gone
          ? { status: "error" as const, error: { code: "not_found", message: "agent `alice` does not exist" } }
          : ok([turn]),
      turnEvents: async () => ok([]),
    } as unknown as LiveApi;
    const store = new LiveStore(api, () => ({}) as Channel<LiveFrame>);
    await store.open("alice");
    expect(store.history).toHaveLength(1);
    gone = true;
    await store.refreshHistory();
    expect(store.history).toEqual([]);
    expect(store.error?.code).toBe("not_found");
    expect(store.error?.message).toContain("alice");
  });

  it("follows a rename of the agent shown, marks a delete, and gives back a prompt that failed", async () => {
    let refuse = false;
    const api = {
      liveSubscribe: async (agent: string) =>
        ok({ id: 1, snapshot: { agent, status: "idle", last_seq: 0, truncated: false, frames: [] } }),
      liveUnsubscribe: async () => ok(null),
      agentMeters: async () => ({ status: "error" as const, error: { code: "not_found", message: "gone" } }),
      agentSessions: async () => ok([]),
      sessionTurns: async () => ok([]),
      agentTurns: async () => ok([]),
      turnEvents: async () => ok([]),
      sendPrompt: async () =>
        refuse
          ? { status: "error" as const, error: { code: "paused", message: "agent `ann` is paused" } }
          : ok({ turn_id: "t1", session: "s1", status: "completed", text: "", error_code: null, error_message: null }),
    } as unknown as LiveApi;
    const store = new LiveStore(api, () => ({}) as Channel<LiveFrame>);
    await store.open("alice");
    // Changes about other agents are ignored; a rename of the one shown names its new alias,
    // also when a later change in the same batch is about that new alias.
    expect(store.follow([{ kind: "delete", alias: "bob", new_alias: null }])).toBeNull();
    expect(store.gone).toBeNull();
    expect(
      store.follow([
        { kind: "rename", alias: "alice", new_alias: "ann" },
        { kind: "rename", alias: "ann", new_alias: "anna" },
      ]),
    ).toBe("anna");
    await store.open("ann");
    expect(await store.send("hello")).toBe(true);
    refuse = true;
    expect(await store.send("hello again")).toBe(false);
    expect(store.error?.code).toBe("paused");
    // Deleted while shown: marked gone, and nothing is sent any more.
    expect(store.follow([{ kind: "delete", alias: "ann", new_alias: null }])).toBeNull();
    expect(store.gone).toEqual({ alias: "ann", kind: "delete" });
    refuse = false;
    expect(await store.send("still there?")).toBe(false);
    // Restored: usable again.
    store.follow([{ kind: "restore", alias: "ann", new_alias: null }]);
    expect(store.gone).toBeNull();
    expect(await store.send("welcome back")).toBe(true);
  });
});

describe("the runtime store", () => {
  it("follows status and approval events after loading the current state", async () => {
    const handlers: Record<string, (e: { payload: unknown }) => void> = {};
    const listen = (name: string) => ({
      listen: async (cb: (e: { payload: unknown }) => void) => {
        handlers[name] = cb;
        return () => {};
      },
    });
    const ev = {
      agentStatusChanged: listen("status"),
      approvalsChanged: listen("approvals"),
      budgetAlert: listen("budget"),
      agentsChanged: listen("agents"),
    } as unknown as RuntimeEvents;
    let strips = 0;
    const api = {
      agentStatuses: async () => ok([{ agent: "alice", status: "idle" }]),
      pendingApprovals: async () => ok([]),
      runtimeStatus: async () => {
        strips++;
        return ok({
          state: "running",
          problem: null,
          agents: 1,
          working: 0,
          error: 0,
          idle: 1,
          pending_approvals: 0,
          spent_today_cents: 0,
          budget_today_cents: 500,
        });
      },
      answerApproval: async () => ok(true),
    } as unknown as RuntimeApi;
    const store = new RuntimeStore(api, ev);
    let reloaded = 0;
    store.onAgentsChanged = () => reloaded++;
    await store.start();
    expect(store.statusOf("alice")).toBe("idle");
    expect(store.statusOf("bob")).toBe("idle");
    handlers.status({ payload: { agent: "alice", status: "waiting_for_approval" } });
    handlers.approvals({
      payload: {
        pending: [
          {
            agent: "alice",
            turn_id: "t1",
            call_id: "c1",
            tool: "file_write",
            arguments: "{}",
            reason: "r",
            requested_at: "x",
          },
        ],
      },
    });
    handlers.agents({ payload: {} });
    handlers.budget({ payload: { agent: "alice", level: "warning", spent_cents: 400, budget_cents: 500 } });
    expect(store.statusOf("alice")).toBe("waiting_for_approval");
    expect(store.pending.map((p) => p.call_id)).toEqual(["c1"]);
    expect(reloaded).toBe(1);
    expect(store.alerts).toHaveLength(1);
    expect(strips).toBeGreaterThan(1);
  });
});

describe("replaying a stored turn that delegated", () => {
  it("loads the child turn its delegate result names and nests it under the card", async () => {
    const parent = (seq: number, kind: Record<string, unknown> & { type: string }) => event(seq, kind);
    const asked: string[] = [];
    const stored: Record<string, TurnEvent[]> = {
      t1: [
        parent(1, { type: "turn_started", session_id: "s1", trigger: "user", prompt: "ask bob" }),
        parent(2, { type: "tool_call", id: "d1", name: "delegate", arguments: "{}" }),
        parent(3, {
          type: "tool_result",
          id: "d1",
          ok: true,
          output: "{}",
          duration_ms: 3,
          receipt_id: null,
          sub_turn_id: "u1",
        }),
        parent(4, { type: "turn_completed", text: "bob says hi" }),
      ],
      u1: [
        {
          turn_id: "u1",
          agent: "bob",
          seq: 1,
          time: "2026-01-01T00:00:00Z",
          type: "turn_started",
          session_id: "s2",
          trigger: "delegate",
          prompt: "say hi",
          parent: { turn_id: "t1", call_id: "d1", agent: "alice" },
        },
        {
          turn_id: "u1",
          agent: "bob",
          seq: 2,
          time: "2026-01-01T00:00:00Z",
          type: "turn_completed",
          text: "hi",
          parent: { turn_id: "t1", call_id: "d1", agent: "alice" },
        },
      ] as TurnEvent[],
    };
    const api = {
      turnEvents: async (id: string) => {
        asked.push(id);
        return ok(stored[id]);
      },
    } as unknown as LiveApi;
    const store = new LiveStore(api, () => ({}) as Channel<LiveFrame>);
    await store.replay({
      id: "t1",
      session_id: "s1",
      trigger: "user",
      prompt: "ask bob",
      status: "completed",
      started_at: "2026-01-01T00:00:00Z",
    });
    expect(asked).toEqual(["t1", "u1"]);
    const turns = store.replaying?.timeline.turns ?? [];
    expect(turns.map((t) => t.turn_id)).toEqual(["t1"]);
    const card = turns[0].items[0];
    expect(card.kind === "tool" && card.children.map((c) => [c.agent, c.state, c.final_text])).toEqual([
      ["bob", "completed", "hi"],
    ]);
  });

  it("lists sessions, shows a picked one with its stored turns, and a new chat sends with no session", async () => {
    let push: (f: LiveFrame) => void = () => {};
    const sent: (string | null)[] = [];
    let listed = 0;
    let sessionWhileRunning: string | null = null;
    const stored = (turn: string, prompt: string, text: string): TurnEvent[] =>
      [
        { type: "turn_started", session_id: "s-old", trigger: "user", prompt },
        { type: "text_delta", text },
        { type: "turn_completed", text },
      ].map((k, i) => ({ ...event(i + 1, k), turn_id: turn }));
    const api = {
      liveSubscribe: async () =>
        ok({
          id: 1,
          snapshot: {
            agent: "alice",
            status: "idle",
            last_seq: 1,
            truncated: false,
            frames: [frame(1, { type: "turn_started", session_id: "s-live", trigger: "user", prompt: "now" })],
          },
        }),
      liveUnsubscribe: async () => ok(null),
      agentMeters: async () => ({ status: "error" as const, error: { code: "not_found", message: "gone" } }),
      agentSessions: async () => {
        listed++;
        return ok([
          { id: "s-live", agent: "alice", kind: "chat", title: "now", turns: 1, started_at: "", last_activity: "" },
          { id: "s-old", agent: "alice", kind: "chat", title: "before", turns: 2, started_at: "", last_activity: "" },
        ]);
      },
      sessionTurns: async (id: string) =>
        ok(id === "s-old" ? [{ id: "o1" }, { id: "o2" }].map((t) => ({ ...t, session_id: id })) : []),
      agentTurns: async () => ok([]),
      turnEvents: async (id: string) => ok(stored(id, `prompt ${id}`, `answer ${id}`)),
      sendPrompt: async (req: { session: string | null }) => {
        sent.push(req.session);
        push(frame(2, { type: "turn_started", session_id: "s-new", trigger: "user", prompt: "fresh" }));
        // While the turn runs, the new chat already is its session.
        sessionWhileRunning = store.session;
        return ok({
          turn_id: "t9",
          session: "s-new",
          status: "completed",
          text: "",
          error_code: null,
          error_message: null,
        });
      },
    } as unknown as LiveApi;
    const store = new LiveStore(api, (onmessage) => {
      push = onmessage;
      return {} as Channel<LiveFrame>;
    });
    await store.open("alice");
    expect(store.sessions.map((x) => x.id)).toEqual(["s-live", "s-old"]);
    expect(store.session).toBe("s-live");
    expect(shownTurns(store.view, store.stream.timeline).map((t) => t.turn_id)).toEqual(["t1"]);

    await store.pickSession("s-old");
    expect(store.session).toBe("s-old");
    const old = shownTurns(store.view, store.stream.timeline);
    expect(old.map((t) => [t.turn_id, t.prompt, t.final_text])).toEqual([
      ["o1", "prompt o1", "answer o1"],
      ["o2", "prompt o2", "answer o2"],
    ]);

    store.newChat();
    expect(store.session).toBeNull();
    expect(shownTurns(store.view, store.stream.timeline)).toEqual([]);
    const before = listed;
    expect(await store.send("fresh")).toBe(true);
    expect(sent).toEqual([null]);
    // The list was read again when the new turn started (its session appears at once), and
    // when the send ended.
    expect(listed).toBe(before + 2);
    expect(sessionWhileRunning).toBe("s-new");
    expect(store.session).toBe("s-new");
    expect(store.view).toMatchObject({ kind: "session", id: "s-new" });
    expect(shownTurns(store.view, store.stream.timeline).map((t) => t.prompt)).toEqual(["fresh"]);
    // The next prompt continues the new session.
    expect(await store.send("more")).toBe(true);
    expect(sent).toEqual([null, "s-new"]);
  });
});

describe("refused connections on the live screen", () => {
  it("notes the agent's refused connections of the last day, and again after a tool result", async () => {
    let push: (f: LiveFrame) => void = () => {};
    const now = Date.parse("2026-03-02T12:00:00Z");
    const refusal = (host: string, time: string) => ({
      agent: "alice",
      time,
      host,
      port: 443,
      allowed: false,
      rule: "no allow pattern matches",
      address: null,
      bytes_up: 0,
      bytes_down: 0,
      duration_ms: 0,
      kind: "connect",
    });
    let rows = [refusal("old.example", "2026-02-28T12:00:00Z")];
    const asked: unknown[][] = [];
    const api = {
      liveSubscribe: async () =>
        ok({ id: 1, snapshot: { agent: "alice", status: "idle", last_seq: 0, truncated: false, frames: [] } }),
      liveUnsubscribe: async () => ok(null),
      agentMeters: async () => ({ status: "error" as const, error: { code: "internal", message: "no" } }),
      agentSessions: async () => ok([]),
      agentTurns: async () => ok([]),
      networkLog: async (...a: unknown[]) => {
        asked.push(a);
        return ok(rows);
      },
    } as unknown as LiveApi;
    const store = new LiveStore(api, (onmessage) => {
      push = onmessage;
      return {} as Channel<LiveFrame>;
    });
    await store.open("alice");
    expect(asked[0]).toEqual(["alice", true, 3]);
    await store.refreshRefused(now);
    expect(store.refused).toEqual([]);
    rows = [refusal("evil.example", "2026-03-02T11:59:00Z"), ...rows];
    await store.refreshRefused(now);
    expect(store.refused.map((r) => r.host)).toEqual(["evil.example"]);
    // A tool result looks again.
    const before = asked.length;
    push(frame(1, { type: "tool_result", call_id: "c1", ok: false }));
    await settle();
    expect(asked.length).toBe(before + 1);
  });
});
