// Runtime-wide state fed by the typed events of the bridge: agent statuses, the approvals
// waiting across agents, the status strip's figures and budget alerts.

import {
  commands,
  events,
  type AgentLifecycleChange,
  type AgentStatus,
  type ApiError,
  type ApprovalDecision,
  type BudgetAlert,
  type PendingApprovalView,
  type RuntimeStatus,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type RuntimeApi = Pick<
  typeof commands,
  "agentStatuses" | "pendingApprovals" | "runtimeStatus" | "answerApproval"
>;

/** The typed events the store follows (the app passes the generated `events`). */
export type RuntimeEvents = Pick<
  typeof events,
  "agentStatusChanged" | "approvalsChanged" | "budgetAlert" | "agentsChanged"
>;

/** The words the UI uses for a status. */
export function statusLabel(s: AgentStatus): string {
  return s === "waiting_for_approval" ? "waiting for approval" : s;
}

/** Cents as dollars for people. */
export function dollars(cents: number | null): string {
  return `$${((cents ?? 0) / 100).toFixed(2)}`;
}

export class RuntimeStore {
  statuses = $state<Record<string, AgentStatus>>({});
  pending = $state<PendingApprovalView[]>([]);
  strip = $state<RuntimeStatus | null>(null);
  alerts = $state<BudgetAlert[]>([]);
  error = $state<ApiError | null>(null);

  #api: RuntimeApi;
  #events: RuntimeEvents;
  #unlisten: (() => void)[] = [];
  /** Called when the config changed (the Agents screen reloads), with the renames, deletes and
   *  restores that finished since the last change (screens showing one of them follow it). */
  onAgentsChanged: (finished: AgentLifecycleChange[]) => void = () => {};

  constructor(api: RuntimeApi = commands, ev: RuntimeEvents = events) {
    this.#api = api;
    this.#events = ev;
  }

  statusOf(agent: string): AgentStatus {
    return this.statuses[agent] ?? "idle";
  }

  /** Listens to the bridge's events first, then loads the current state (nothing falls
   *  between the two: an event arriving during the load is applied again after it). */
  async start(): Promise<void> {
    this.#unlisten = await Promise.all([
      this.#events.agentStatusChanged.listen((e) => {
        this.statuses[e.payload.agent] = e.payload.status;
        void this.refreshStrip();
      }),
      this.#events.approvalsChanged.listen((e) => {
        this.pending = e.payload.pending;
        void this.refreshStrip();
      }),
      this.#events.budgetAlert.listen((e) => {
        this.alerts = [...this.alerts, e.payload];
        void this.refreshStrip();
      }),
      this.#events.agentsChanged.listen((e) => {
        this.onAgentsChanged(e.payload.finished ?? []);
        void this.refreshStrip();
      }),
    ]);
    await this.refresh();
  }

  stop(): void {
    for (const u of this.#unlisten) u();
    this.#unlisten = [];
  }

  async refresh(): Promise<void> {
    try {
      const [statuses, pending] = await Promise.all([
        this.#api.agentStatuses().then(unwrap),
        this.#api.pendingApprovals().then(unwrap),
      ]);
      const map: Record<string, AgentStatus> = {};
      for (const s of statuses) map[s.agent] = s.status;
      this.statuses = map;
      this.pending = pending;
    } catch (e) {
      this.error = toApiError(e);
    }
    await this.refreshStrip();
  }

  async refreshStrip(): Promise<void> {
    try {
      this.strip = unwrap(await this.#api.runtimeStatus());
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  /** Answers an approval from the inbox: the request of call `callId` in turn `turnId`. */
  async answer(turnId: string, callId: string, decision: ApprovalDecision, message: string | null): Promise<boolean> {
    try {
      return unwrap(await this.#api.answerApproval(turnId, callId, decision, message));
    } catch (e) {
      this.error = toApiError(e);
      return false;
    }
  }

  dismissAlert(i: number): void {
    this.alerts = this.alerts.filter((_, j) => j !== i);
  }
}
