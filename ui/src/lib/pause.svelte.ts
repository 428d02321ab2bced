// Which agents are paused (a paused agent runs no new turns until resumed), kept current by the
// commands' answers and by the `PausedChanged` event the tray's pause all / resume all sends.

import { commands, events, type ApiError } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap, type Ok } from "./result";

export type PauseApi = Pick<typeof commands, "pausedAgents" | "setAgentPaused" | "setAllPaused">;

export class PauseStore {
  paused = $state<string[]>([]);
  error = $state<ApiError | null>(null);

  #api: PauseApi;
  #unlisten: (() => void) | null = null;

  constructor(api: PauseApi = commands) {
    this.#api = api;
  }

  isPaused(agent: string): boolean {
    return this.paused.includes(agent);
  }

  /** Listens for pauses made from the tray, then loads the current set. */
  async start(): Promise<void> {
    this.#unlisten = await events.pausedChanged.listen((e) => {
      this.paused = e.payload.paused;
    });
    await this.load();
  }

  stop(): void {
    this.#unlisten?.();
    this.#unlisten = null;
  }

  async load(): Promise<void> {
    await this.#apply(() => this.#api.pausedAgents());
  }

  async setPaused(agent: string, paused: boolean): Promise<void> {
    await this.#apply(() => this.#api.setAgentPaused(agent, paused));
  }

  async setAll(paused: boolean): Promise<void> {
    await this.#apply(() => this.#api.setAllPaused(paused));
  }

  async #apply(call: () => Promise<Ok<string[]>>): Promise<void> {
    try {
      this.paused = unwrap(await call());
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }
}
