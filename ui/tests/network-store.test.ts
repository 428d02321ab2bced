import { describe, expect, it } from "vitest";
import type { AllowDomainPreview, NetworkConnectionView, ProfileView } from "../src/bindings";
import { bytes, decision, duration, NetworkStore, rowKey, hostPort, type NetworkApi } from "../src/lib/network.svelte";

const ok = <T>(data: T) => Promise.resolve({ status: "ok" as const, data });
const err = (code: "invalid_argument", message: string) =>
  Promise.resolve({ status: "error" as const, error: { code, message } });

const row = (host: string, allowed: boolean, rule: string): NetworkConnectionView => ({
  agent: "web",
  time: "2026-03-01T10:00:00.000Z",
  host,
  port: 80,
  allowed,
  rule,
  address: allowed ? "127.0.0.1:8080" : null,
  bytes_up: 78,
  bytes_down: allowed ? 1234 : 0,
  duration_ms: allowed ? 12 : 0,
  kind: "http",
});

describe("network rows in words", () => {
  it("says sizes, durations, targets and decisions plainly", () => {
    expect(bytes(0)).toBe("0 B");
    expect(bytes(999)).toBe("999 B");
    expect(bytes(1234)).toBe("1.2 kB");
    expect(bytes(56_000_000)).toBe("56 MB");
    expect(duration(12)).toBe("12 ms");
    expect(duration(1450)).toBe("1.4 s");
    expect(duration(125_000)).toBe("2 min 5 s");
    expect(hostPort({ host: "example.com", port: 443 })).toBe("example.com:443");
    expect(hostPort({ host: "fd00::1", port: 8080 })).toBe("[fd00::1]:8080");
    expect(decision(row("a", true, 'allow "a"'))).toBe('allowed by allow "a"');
    expect(decision(row("b", false, "no allow pattern matches"))).toBe("refused: no allow pattern matches");
  });
});

describe("network store", () => {
  it("lists with its filters, previews an allow beside its row, saves on confirmation and lists again", async () => {
    const calls: unknown[][] = [];
    let rows = [row("example.com", false, "no allow pattern matches"), row("localhost", true, 'allow "localhost"')];
    const preview: AllowDomainPreview = {
      agent: "web",
      profile: "net",
      used_by: ["web"],
      pattern: "example.com",
      edit: { kind: "risk", name: "net", changes: [] },
      preview: { diff: [{ kind: "add", text: "x" }], errors: [] },
    };
    const api = {
      networkLog: (...a: unknown[]) => {
        calls.push(["networkLog", ...a]);
        return ok(rows);
      },
      previewAllowDomain: (agent: string, host: string, port: number) => {
        calls.push(["previewAllowDomain", agent, host, port]);
        return host === "cdn.evil.example"
          ? err("invalid_argument", '`cdn.evil.example:80` is refused by deny "*.evil.example"')
          : ok(preview);
      },
      allowDomain: (agent: string, host: string, port: number) => {
        calls.push(["allowDomain", agent, host, port]);
        rows = [row("example.com", true, 'allow "example.com"'), ...rows];
        return ok({ kind: "risk", name: "net", used_by: ["web"], risk: null, runtime: null } as ProfileView);
      },
    } as unknown as NetworkApi;
    const s = new NetworkStore(api);
    expect(s.loaded).toBe(false);
    s.agent = "web";
    s.refusedOnly = true;
    await s.refresh();
    expect(s.loaded).toBe(true);
    expect(calls[0]).toEqual(["networkLog", "web", true, 500]);
    s.agent = "";
    s.refusedOnly = false;
    await s.refresh();
    expect(calls[1]).toEqual(["networkLog", null, false, 500]);
    expect(s.rows).toHaveLength(2);

    const refused = s.rows[0];
    await s.previewAllow(refused);
    expect(s.allowing?.key).toBe(rowKey(refused));
    expect(s.allowing?.preview.pattern).toBe("example.com");
    expect(calls.some((c) => c[0] === "allowDomain")).toBe(false);
    s.cancelAllow();
    expect(s.allowing).toBeNull();

    await s.previewAllow(refused);
    await s.confirmAllow();
    expect(calls.filter((c) => c[0] === "allowDomain")).toEqual([["allowDomain", "web", "example.com", 80]]);
    expect(s.allowing).toBeNull();
    expect(s.allowed).toEqual({ pattern: "example.com", profile: "net", used_by: ["web"] });
    expect(s.rows).toHaveLength(3);

    // A refusal names its row and allows nothing.
    const denied = row("cdn.evil.example", false, 'deny "*.evil.example"');
    await s.previewAllow(denied);
    expect(s.allowing).toBeNull();
    expect(s.allowError?.key).toBe(rowKey(denied));
    expect(s.allowError?.error.message).toContain('deny "*.evil.example"');
  });
});
