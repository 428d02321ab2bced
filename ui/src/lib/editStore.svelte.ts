// How every config form edits (agent settings, profiles, filesystem reach, memory backends,
// provider routes, MCP servers): the form's store holds a draft; `preview` asks the backend what
// saving it would do (the validator's findings and the diff of config.toml), and of previews
// that overtake each other only the newest one's answer is shown; `save` sends the draft, keeps
// it and the error when refused, and refreshes the saved state when accepted. A store says how
// its draft becomes an edit, which commands preview and save it, and what a save refreshes.

import type { ApiError, ConfigIssue, DiffLine } from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap, type Ok } from "./result";

/** What a preview answers: the changed lines of config.toml and the validator's findings. */
export interface EditPreview<Issue = ConfigIssue> {
  diff: DiffLine[];
  errors: Issue[];
}

export abstract class EditStore<Input, Preview extends EditPreview<Issue>, Result = unknown, Issue = ConfigIssue> {
  /** The changed lines of config.toml the shown preview found. */
  diff = $state<DiffLine[]>([]);
  /** The validator's findings on the previewed edit (saving waits while any exist). */
  issues = $state<Issue[]>([]);
  /** The last refused save (and, unless a store shows them elsewhere, a failed preview). */
  error = $state<ApiError | null>(null);
  busy = $state(false);

  #generation = 0;

  /** The draft as the edit the backend takes, or null when there is nothing to send (nothing
   *  changed, nothing open, or a problem the form names itself). */
  protected abstract editInput(): Input | null;
  protected abstract sendPreview(input: Input): Promise<Ok<Preview>>;
  protected abstract sendSave(input: Input): Promise<Ok<Result>>;
  /** After the backend saved `input`: refresh what the store holds as saved. */
  protected abstract afterSave(result: Result, input: Input): void | Promise<void>;

  /** A new edit is previewed: what was said about the last one (saved, a check) is dropped. */
  protected edited(): void {}

  /** Whether the store sends a save now, beyond there being an edit (its form's Save button
   *  says when it is offered). */
  protected saveAllowed(): boolean {
    return true;
  }

  /** A failed preview's error, or null once one succeeds; shown in `error` unless overridden. */
  protected previewError(e: ApiError | null): void {
    this.error = e;
  }

  /** The preview now shown, or null when cleared; for a store that keeps more of it. */
  protected shown(_preview: Preview | null): void {}

  /** Drops every answer still on its way: what was asked before now will not be shown. */
  protected forget(): void {
    this.#generation++;
  }

  /** A check, for an answer on its way, that nothing was asked (or forgotten) since now. */
  protected latest(): () => boolean {
    const generation = this.#generation;
    return () => generation === this.#generation;
  }

  /** Asks the backend what saving the draft would do; an unchanged draft shows nothing. */
  async preview(): Promise<void> {
    const input = this.editInput();
    this.forget();
    const fresh = this.latest();
    this.edited();
    if (input === null) {
      this.#show(null);
      this.previewError(null);
      return;
    }
    try {
      const p = unwrap(await this.sendPreview(input));
      if (!fresh()) return;
      this.#show(p);
      this.previewError(null);
    } catch (e) {
      if (!fresh()) return;
      this.#show(null);
      this.previewError(toApiError(e));
    }
  }

  /** Saves the draft; true when saved. A refusal keeps the draft and shows its error. */
  async save(): Promise<boolean> {
    const input = this.editInput();
    if (input === null || !this.saveAllowed()) return false;
    this.busy = true;
    this.error = null;
    try {
      const result = unwrap(await this.sendSave(input));
      // A preview still on its way is of the draft before the save.
      this.forget();
      await this.afterSave(result, input);
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    } finally {
      this.busy = false;
    }
  }

  #show(p: Preview | null): void {
    this.diff = p?.diff ?? [];
    this.issues = p?.errors ?? [];
    this.shown(p);
  }
}
