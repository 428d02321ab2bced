/**
 * A component loaded on first use: the window's first screen (Agents) is in the main bundle,
 * every other screen and the first-run flow are separate chunks fetched when first shown, so
 * the page parses less before it draws the agents.
 */
export class Lazy<T> {
  /** The component once loaded, else null. */
  component = $state<T | null>(null);
  /** Why loading failed, if it did. */
  error = $state<string | null>(null);
  #started = false;
  readonly #load: () => Promise<{ default: T }>;

  constructor(load: () => Promise<{ default: T }>) {
    this.#load = load;
  }

  /** The component, starting its load the first time it is asked for (null until loaded). */
  get(): T | null {
    if (!this.#started) {
      this.#started = true;
      this.#load().then(
        (m) => (this.component = m.default),
        (e: unknown) => (this.error = String(e)),
      );
    }
    return this.component;
  }
}
