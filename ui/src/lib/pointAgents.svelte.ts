// After a new provider route is saved: the offer to point agents at it. Agents without a
// provider are chosen at first; saving sets each chosen agent's `model_provider` through the
// same agent edit the agent settings use (validated, comments kept).

import { commands, type AgentSummary, type ApiError } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type PointAgentsApi = Pick<typeof commands, "saveAgentEdit">;

export interface PointResult {
  /** The agents that use the route now. */
  done: string[];
  /** The agents whose edit was refused, with why. */
  failed: { alias: string; error: ApiError }[];
}

export class PointAgentsStore {
  /** The route offered, or `null` when nothing is offered. */
  reference = $state<string | null>(null);
  /** Every agent with the route it uses now. */
  agents = $state<{ alias: string; current: string | null }[]>([]);
  chosen = $state<string[]>([]);
  busy = $state(false);
  result = $state<PointResult | null>(null);

  #api: PointAgentsApi;

  constructor(api: PointAgentsApi = commands) {
    this.#api = api;
  }

  /** Offers `reference` to `agents`; those without a provider are chosen. Nothing is offered
   *  when there is no agent, or every agent already uses the route. */
  offer(reference: string, agents: AgentSummary[]): void {
    const others = agents.filter((a) => a.model_provider !== reference);
    this.result = null;
    if (others.length === 0) {
      this.reference = null;
      return;
    }
    this.reference = reference;
    this.agents = others.map((a) => ({ alias: a.alias, current: a.model_provider }));
    this.chosen = others.filter((a) => !a.model_provider).map((a) => a.alias);
  }

  toggle(alias: string, on: boolean): void {
    const rest = this.chosen.filter((a) => a !== alias);
    this.chosen = on ? [...rest, alias] : rest;
  }

  dismiss(): void {
    this.reference = null;
    this.result = null;
  }

  /** Points every chosen agent at the route, one validated edit each. */
  async apply(): Promise<PointResult | null> {
    const reference = this.reference;
    if (!reference || this.chosen.length === 0) return null;
    this.busy = true;
    const result: PointResult = { done: [], failed: [] };
    for (const alias of this.chosen) {
      try {
        unwrap(
          await this.#api.saveAgentEdit({
            alias,
            changes: [{ kind: "set", field: "model_provider", value: reference }],
          }),
        );
        result.done.push(alias);
      } catch (e) {
        result.failed.push({ alias, error: toApiError(e) });
      }
    }
    this.busy = false;
    this.result = result;
    this.agents = this.agents.filter((a) => !result.done.includes(a.alias));
    this.chosen = [];
    return result;
  }
}
