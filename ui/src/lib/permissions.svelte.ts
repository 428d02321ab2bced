// The Permissions screen: what every agent may do to every other agent (workspace read/write,
// memory reads with their categories, delegation), why for any cell (the rule, the grants in
// the config, what enforces it), and a path tester. The backend decides everything with the
// same checks as `warren policy map | explain | check`.

import {
  commands,
  type ApiError,
  type PermissionAspect,
  type PermissionCell,
  type PermissionExplanation,
  type PermissionMap,
  type PolicyCheck,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type PermissionsApi = Pick<typeof commands, "permissionMap" | "explainPermission" | "policyCheck">;

export const ASPECTS: PermissionAspect[] = ["read", "write", "memory", "delegate"];

/** A cell's marks: `R`, `W` or `RW` for the workspace, `M` or `M[a, b]` for memory, `D` for
 *  delegation; empty when the agent may do nothing to the peer. */
export function cellMarks(c: PermissionCell): string[] {
  const out: string[] = [];
  const ws = `${c.read ? "R" : ""}${c.write ? "W" : ""}`;
  if (ws) out.push(ws);
  if (c.memory) out.push(c.memory_categories ? `M[${c.memory_categories.join(", ")}]` : "M");
  if (c.delegate) out.push("D");
  return out;
}

/** One cell of the grid as the screen draws it. */
export interface GridCell {
  peer: string;
  /** The row's own agent (no permission to show). */
  self: boolean;
  /** The marks, or `·`. */
  text: string;
  /** What a screen reader says. */
  label: string;
}

/** One row of the grid. */
export interface GridRow {
  agent: string;
  title: string;
  cells: GridCell[];
}

const key = (agent: string, peer: string) => `${agent}\u0000${peer}`;

export class PermissionsStore {
  /** The grid as the backend answered it: replaced whole, never changed in place, so it is held
   * without deep reactivity (a 50-agent grid is 2,450 cells). */
  map = $state.raw<PermissionMap | null>(null);
  /** Each cell by `agent` and `peer`, built once per answer. */
  #cells = $derived(
    Object.fromEntries(
      (this.map?.rows ?? []).flatMap((r) => r.cells.map((c) => [key(r.agent, c.peer), c] as const)),
    ) as Record<string, PermissionCell>,
  );
  /** The grid's text, computed once per answer so the screen only places strings. */
  grid = $derived.by((): GridRow[] => {
    const map = this.map;
    if (!map) return [];
    return map.rows.map((row) => ({
      agent: row.agent,
      title: row.sandbox ? `sandbox: ${row.sandbox}` : "sandbox unavailable",
      cells: map.agents.map((peer) => {
        if (peer === row.agent) return { peer, self: true, text: "—", label: `${row.agent} itself` };
        const c = this.#cells[key(row.agent, peer)];
        const marks = c ? cellMarks(c) : [];
        return {
          peer,
          self: false,
          text: marks.length ? marks.join(" ") : "·",
          label: `${row.agent} on ${peer}: ${marks.length ? marks.join(" ") : "nothing"}`,
        };
      }),
    }));
  });
  error = $state<ApiError | null>(null);
  /** The cell whose explanation is shown. */
  selected = $state<{ agent: string; peer: string } | null>(null);
  /** `selected` as one comparable key ("" when none). */
  selectedKey = $derived(this.selected ? key(this.selected.agent, this.selected.peer) : "");
  explanations = $state<PermissionExplanation[]>([]);
  explainError = $state<ApiError | null>(null);
  /** The path tester. */
  testAgent = $state("");
  testPath = $state("");
  testWrite = $state(false);
  testResult = $state<PolicyCheck | null>(null);
  testError = $state<ApiError | null>(null);

  #api: PermissionsApi;
  #explainSeq = 0;

  constructor(api: PermissionsApi = commands) {
    this.#api = api;
  }

  async load(): Promise<void> {
    try {
      this.map = unwrap(await this.#api.permissionMap());
      this.error = null;
      if (this.map && !this.map.agents.includes(this.testAgent)) this.testAgent = this.map.agents[0] ?? "";
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  /** The cell of `agent` on `peer`, if both exist. */
  cell(agent: string, peer: string): PermissionCell | null {
    return this.#cells[key(agent, peer)] ?? null;
  }

  /** Explains every aspect of one cell (denials included). */
  async explain(agent: string, peer: string): Promise<void> {
    const seq = ++this.#explainSeq;
    this.selected = { agent, peer };
    this.explanations = [];
    this.explainError = null;
    try {
      const all = await Promise.all(ASPECTS.map((a) => this.#api.explainPermission(agent, peer, a).then(unwrap)));
      if (seq === this.#explainSeq) this.explanations = all;
    } catch (e) {
      if (seq === this.#explainSeq) this.explainError = toApiError(e);
    }
  }

  /** Runs the path tester for the chosen agent, path and access. */
  async test(): Promise<void> {
    this.testResult = null;
    this.testError = null;
    if (this.testPath.trim() === "") {
      this.testError = { code: "invalid_argument", message: "type a path to test", details: [] };
      return;
    }
    try {
      this.testResult = unwrap(await this.#api.policyCheck(this.testAgent, this.testWrite, this.testPath.trim()));
    } catch (e) {
      this.testError = toApiError(e);
    }
  }
}
