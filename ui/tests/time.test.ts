import { describe, expect, it } from "vitest";
import { localTime } from "../src/lib/time";

describe("local times", () => {
  it("shows an RFC 3339 time in the local zone and leaves other text alone", () => {
    const t = "2026-12-03T17:54:51.361524Z";
    const shown = localTime(t, true);
    expect(shown).not.toBe(t);
    expect(shown).not.toContain("T17:54");
    expect(shown).toBe(new Date(t).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }));
    expect(localTime("not a time")).toBe("not a time");
  });
});
