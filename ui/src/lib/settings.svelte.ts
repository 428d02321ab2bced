// The Settings screen's state: provider keys (set or not, and where; values are sent once and
// never read back), the secret store, the sandbox report and the desktop start settings.

import {
  commands,
  type ApiError,
  type DesktopSettingsView,
  type DoctorReport,
  type ProviderKeyView,
  type SecretBackend,
} from "../bindings";
import { toApiError } from "./agents.svelte";
import { unwrap, type Ok } from "./result";

export type SettingsApi = Pick<
  typeof commands,
  | "providerKeys"
  | "setProviderKey"
  | "secretBackend"
  | "sandboxDoctor"
  | "desktopSettings"
  | "setStartHidden"
  | "setStartOnLogin"
  | "setNotifications"
>;

export class SettingsStore {
  providers = $state<ProviderKeyView[]>([]);
  backend = $state<SecretBackend | null>(null);
  doctor = $state<DoctorReport | null>(null);
  desktop = $state<DesktopSettingsView | null>(null);
  error = $state<ApiError | null>(null);
  /** The route whose key was saved last (for the confirmation line). */
  savedKey = $state<string | null>(null);

  #api: SettingsApi;

  constructor(api: SettingsApi = commands) {
    this.#api = api;
  }

  async load(): Promise<void> {
    // Each part loads on its own: an invalid config must not hide the secret store or the
    // start settings.
    this.error = null;
    const part = async <T>(call: () => Promise<Ok<T>>, set: (v: T) => void) => {
      try {
        set(unwrap(await call()));
      } catch (e) {
        this.error = toApiError(e);
      }
    };
    await Promise.all([
      part(
        () => this.#api.providerKeys(),
        (v) => (this.providers = v),
      ),
      part(
        () => this.#api.secretBackend(),
        (v) => (this.backend = v),
      ),
      part(
        () => this.#api.desktopSettings(),
        (v) => (this.desktop = v),
      ),
      part(
        () => this.#api.sandboxDoctor(),
        (v) => (this.doctor = v),
      ),
    ]);
  }

  /** Sends a key to the secret store; the caller clears its field whatever happens. */
  async setKey(reference: string, value: string): Promise<boolean> {
    this.savedKey = null;
    try {
      const view = unwrap(await this.#api.setProviderKey(reference, value));
      this.providers = this.providers.map((p) => (p.reference === reference ? view : p));
      this.savedKey = reference;
      this.error = null;
      return true;
    } catch (e) {
      this.error = toApiError(e);
      return false;
    }
  }

  async setStartHidden(on: boolean): Promise<void> {
    try {
      this.desktop = unwrap(await this.#api.setStartHidden(on));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  async setNotifications(on: boolean): Promise<void> {
    try {
      this.desktop = unwrap(await this.#api.setNotifications(on));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }

  async setStartOnLogin(on: boolean): Promise<void> {
    try {
      this.desktop = unwrap(await this.#api.setStartOnLogin(on));
      this.error = null;
    } catch (e) {
      this.error = toApiError(e);
    }
  }
}
