import { describe, expect, it } from "vitest";
import { localTime, waitedFor } from "../src/lib/time";

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
});
