// The first-start offer to import a ZeroClaw install: found at ZeroClaw's default place, its
// whole plan shown (a dry run: nothing written) before the user imports, a prefix for every
// imported name when aliases collide, the import's progress while memory rows are written, and
// what was written at the end.

import { Channel } from "@tauri-apps/api/core";
import { commands, type ApiError, type ImportProgress, type ImportReport, type ZeroclawInstall } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type ImportApi = Pick<typeof commands, "zeroclawInstall" | "planZeroclawImport" | "importZeroclaw">;

/** Makes the channel the import's progress arrives on; the app uses Tauri's `Channel`. */
export type ProgressChannel = (onmessage: (p: ImportProgress) => void) => Channel<ImportProgress>;

const tauriChannel: ProgressChannel = (onmessage) => {
  const c = new Channel<ImportProgress>();
  c.onmessage = onmessage;
  return c;
};

export type ImportStage = "hidden" | "offer" | "planning" | "plan" | "importing" | "done";

export class ImportStore {
  found = $state<ZeroclawInstall | null>(null);
  stage = $state<ImportStage>("hidden");
  prefix = $state("");
  /** What to do with a profile or provider entry Warren has under the same name but other settings. */
  collisions = $state<"" | "rename" | "skip" | "replace">("");
  plan = $state<ImportReport | null>(null);
  result = $state<ImportReport | null>(null);
  error = $state<ApiError | null>(null);
  progress = $state<{ done: number; total: number; agent: string } | null>(null);

  #api: ImportApi;
  #channel: ProgressChannel;
  #seq = 0;

  constructor(api: ImportApi = commands, channel: ProgressChannel = tauriChannel) {
    this.#api = api;
    this.#channel = channel;
  }

  /** Looks for an install not imported yet and offers it. */
  async detect(): Promise<void> {
    try {
      const found = unwrap(await this.#api.zeroclawInstall());
      this.found = found;
      this.stage = found && !found.imported ? "offer" : "hidden";
    } catch (e) {
      // Nothing to offer when the place cannot be read; the rest of the window works.
      this.found = null;
      this.stage = "hidden";
      this.error = toApiError(e);
    }
  }

  /** Computes the plan for the current prefix (writes nothing). */
  async review(): Promise<void> {
    if (!this.found) return;
    const seq = ++this.#seq;
    this.stage = "planning";
    this.error = null;
    try {
      const plan = unwrap(await this.#api.planZeroclawImport(this.found.path, this.prefix, this.collisions || null));
      if (seq !== this.#seq) return;
      this.plan = plan;
    } catch (e) {
      if (seq !== this.#seq) return;
      this.plan = null;
      this.error = toApiError(e);
    }
    if (seq === this.#seq) this.stage = "plan";
  }

  /** True when the plan can be carried out as shown. */
  get ready(): boolean {
    return this.stage === "plan" && !!this.plan && this.plan.plan.problems.length === 0;
  }

  /** Progress from the backend: rows done over every agent, and the agent being imported. */
  onProgress(p: ImportProgress): void {
    if (this.stage === "importing") this.progress = { done: p.overall_done, total: p.overall_total, agent: p.agent };
  }

  /** Imports as planned; the plan stays on screen with the counts written. */
  async run(): Promise<void> {
    if (!this.found || !this.ready) return;
    this.stage = "importing";
    this.error = null;
    this.progress = { done: 0, total: this.plan?.plan.totals.memory_rows ?? 0, agent: "" };
    try {
      const progress = this.#channel((p) => this.onProgress(p));
      this.result = unwrap(
        await this.#api.importZeroclaw(this.found.path, this.prefix, this.collisions || null, progress),
      );
      this.found = { ...this.found, imported: true };
      this.stage = "done";
    } catch (e) {
      this.error = toApiError(e);
      this.stage = "plan";
    }
  }

  /** Hides the offer for this window. */
  dismiss(): void {
    ++this.#seq;
    this.stage = "hidden";
  }
}
