import { describe, expect, it, vi } from "vitest";
import { localTime, logTime, waitedFor } from "../src/lib/time";

describe("local times", () => {
  it("shows an RFC 3339 time in the local zone and leaves other text alone", () => {
    const t = "2026-12-03T17:54:51.361524Z";
    const shown = localTime(t, true);
    expect(shown).not.toBe(t);
    expect(shown).not.toContain("T17:54");
    expect(shown).toBe(new Date(t).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }));
    expect(localTime("not a time")).toBe("not a time");
  });

  it("says how long a request has waited, in the largest unit that fits", () => {
    const at = "2026-12-06T10:00:00Z";
    const after = (s: number) => waitedFor(at, Date.parse(at) + s * 1000);
    expect(after(-3)).toBe("waiting: just now"); // a clock a little behind the backend's
    expect(after(4)).toBe("waiting: just now");
    expect(after(42)).toBe("waiting for 42 s");
    expect(after(185)).toBe("waiting for 3 min");
    expect(after(2 * 3600)).toBe("waiting for 2 h");
    expect(after(2 * 3600 + 5 * 60)).toBe("waiting for 2 h 5 min");
    expect(after(30 * 3600)).toBe(`waiting since ${localTime(at)}`);
    expect(waitedFor("not a time", 0)).toBe("not a time");
  });

  it("shows a log line's local time to the millisecond, with its day only when not today", () => {
    const t = "2026-12-06T10:11:12.345Z";
    const d = new Date(t);
    const time = logTime(t, d);
    expect(time).toContain("345");
    expect(time).toContain(String(d.getSeconds()).padStart(2, "0"));
    // The local hour, not the UTC one (the zone the tests run in may be either).
    expect(time.startsWith(String(d.getHours()).padStart(2, "0"))).toBe(true);
    const nextDay = new Date(d.getTime() + 24 * 3600 * 1000);
    const older = logTime(t, nextDay);
    expect(older).toBe(`${d.toLocaleDateString(undefined, { month: "short", day: "numeric" })} ${time}`);
    expect(logTime("garbled")).toBe("garbled");
  });

  it("a log time follows the user's zone, not UTC as written", () => {
    // Node reads TZ again when it changes.
    vi.stubEnv("TZ", "America/New_York");
    try {
      const t = "2026-12-06T10:11:12.345Z";
      expect(logTime(t, new Date(t))).toMatch(/^05:11:12.345$/);
      // Just after midnight UTC is the evening before in New York: the day is shown.
      expect(logTime("2026-12-07T00:30:00.000Z", new Date("2026-12-07T15:00:00Z"))).toMatch(/Dec 6.*19:30:00.000$/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
