// The cron section of an agent's detail view: its jobs (config jobs read-only), a form that
// checks a new or edited job through the backend (field errors, the next five run times)
// before it can be saved, on/off, run now and delete.

import {
  commands,
  type ApiError,
  type CronCheck,
  type CronField,
  type CronJobView,
  type CronRunView,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap } from "./result";

export type CronApi = Pick<
  typeof commands,
  "cronJobs" | "checkCronJob" | "checkCronEdit" | "addCronJob" | "editCronJob" | "removeCronJob" | "runCronJob"
>;

/** What the form holds: a new job (`id` null) or an edit of a runtime job. */
export interface CronDraft {
  id: string | null;
  schedule: string;
  prompt: string;
  enabled: boolean;
}

export class CronStore {
  agent = $state("");
  jobs = $state<CronJobView[]>([]);
  error = $state<ApiError | null>(null);
  /** The open form, its check, and whether a save is going on. */
  draft = $state<CronDraft | null>(null);
  check = $state<CronCheck | null>(null);
  busy = $state(false);
  /** Runs started from the window that have not ended yet (job ids), and the last answers. */
  running = $state<string[]>([]);
  lastRun = $state<CronRunView | null>(null);

  #api: CronApi;
  #seq = 0;

  constructor(api: CronApi = commands) {
    this.#api = api;
  }

  /** Loads `agent`'s jobs. */
  async load(agent: string) {
    this.agent = agent;
    try {
      this.jobs = unwrap(await this.#api.cronJobs(agent));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  /** The form's errors for one field. */
  errorsFor(field: CronField): string[] {
    return (this.check?.errors ?? []).filter((e) => e.field === field).map((e) => e.message);
  }

  /** True when the form may be saved: checked, without errors. */
  get canSave(): boolean {
    return this.draft !== null && this.check !== null && this.check.errors.length === 0 && !this.busy;
  }

  openNew() {
    this.draft = { id: null, schedule: "", prompt: "", enabled: true };
    this.check = null;
  }

  openEdit(job: CronJobView) {
    this.draft = { id: job.id, schedule: job.schedule, prompt: job.prompt, enabled: job.enabled };
    void this.runCheck();
  }

  close() {
    this.draft = null;
    this.check = null;
  }

  /** Checks the form through the backend; a newer check wins over an older answer. */
  async runCheck() {
    const d = this.draft;
    if (!d) return;
    const n = ++this.#seq;
    try {
      const check = d.id
        ? unwrap(await this.#api.checkCronEdit(d.id, { schedule: d.schedule, prompt: d.prompt, enabled: d.enabled }))
        : unwrap(
            await this.#api.checkCronJob({
              agent: this.agent,
              schedule: d.schedule,
              prompt: d.prompt,
              enabled: d.enabled,
            }),
          );
      if (n === this.#seq) {
        this.check = check;
        this.error = null;
      }
    } catch (e) {
      if (n === this.#seq) this.error = toApiError(e);
    }
  }

  /** Saves the form when its check passed; true when saved. */
  async save(): Promise<boolean> {
    await this.runCheck();
    const d = this.draft;
    if (!d || !this.canSave) return false;
    this.busy = true;
    try {
      if (d.id) {
        unwrap(await this.#api.editCronJob(d.id, { schedule: d.schedule, prompt: d.prompt, enabled: d.enabled }));
      } else {
        unwrap(
          await this.#api.addCronJob({ agent: this.agent, schedule: d.schedule, prompt: d.prompt, enabled: d.enabled }),
        );
      }
      this.close();
      await this.load(this.agent);
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    } finally {
      this.busy = false;
    }
  }

  async setEnabled(job: CronJobView, enabled: boolean) {
    try {
      unwrap(await this.#api.editCronJob(job.id, { schedule: null, prompt: null, enabled }));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
    await this.load(this.agent);
  }

  async remove(job: CronJobView) {
    try {
      unwrap(await this.#api.removeCronJob(job.id));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
    await this.load(this.agent);
  }

  /** Runs a job now; its turn streams into the agent's Live timeline meanwhile. */
  async runNow(job: CronJobView) {
    this.running = [...this.running, job.id];
    try {
      this.lastRun = unwrap(await this.#api.runCronJob(job.id));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    } finally {
      this.running = this.running.filter((id) => id !== job.id);
    }
    await this.load(this.agent);
  }
}
