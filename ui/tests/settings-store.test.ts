import { describe, expect, it } from "vitest";
import type { ProviderKeyView } from "../src/bindings";
import { SettingsStore, type SettingsApi } from "../src/lib/settings.svelte";

const route: ProviderKeyView = {
  reference: "openai.main",
  family: "openai",
  model: "gpt-test",
  uri: "http://127.0.0.1:9/v1",
  secret: null,
  api_key_env: null,
  key_set: false,
  store: null,
};

function fakeApi(over: Partial<SettingsApi> = {}): SettingsApi {
  const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
  return {
    providerKeys: () => ok([route]),
    setProviderKey: (reference) =>
      ok({ ...route, reference, secret: "OPENAI_MAIN_API_KEY", key_set: true, store: "keyring" }),
    secretBackend: () => ok({ backend: "keyring", description: "the desktop keyring" }),
    sandboxDoctor: () =>
      Promise.resolve({
        status: "error" as const,
        error: { code: "invalid_config" as const, message: "bad", details: [] },
      }),
    desktopSettings: () =>
      ok({
        start_hidden: false,
        notifications: true,
        start_on_login: false,
        autostart_path: "/a",
        settings_path: "/s",
      }),
    setStartHidden: (on) =>
      ok({ start_hidden: on, notifications: true, start_on_login: false, autostart_path: "/a", settings_path: "/s" }),
    setNotifications: (on) =>
      ok({ start_hidden: false, notifications: on, start_on_login: false, autostart_path: "/a", settings_path: "/s" }),
    setStartOnLogin: (on) =>
      ok({ start_hidden: false, notifications: true, start_on_login: on, autostart_path: "/a", settings_path: "/s" }),
    ...over,
  };
}

describe("settings store", () => {
  it("one failing part does not hide the others", async () => {
    const s = new SettingsStore(fakeApi());
    await s.load();
    expect(s.providers).toHaveLength(1);
    expect(s.backend?.backend).toBe("keyring");
    expect(s.desktop?.start_on_login).toBe(false);
    expect(s.doctor).toBeNull();
    expect(s.error?.code).toBe("invalid_config");
  });

  it("turning notifications off shows them off", async () => {
    const s = new SettingsStore(fakeApi());
    await s.load();
    expect(s.desktop?.notifications).toBe(true);
    await s.setNotifications(false);
    expect(s.desktop?.notifications).toBe(false);
    expect(s.error).toBeNull();
  });

  it("a saved key shows as set with its store, and the value is kept nowhere", async () => {
    const s = new SettingsStore(fakeApi());
    await s.load();
    expect(await s.setKey("openai.main", "sk-secret")).toBe(true);
    expect(s.providers[0]).toMatchObject({ key_set: true, store: "keyring" });
    expect(s.savedKey).toBe("openai.main");
    expect(JSON.stringify(s.providers)).not.toContain("sk-secret");
  });
});
