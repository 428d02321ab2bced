import { describe, expect, it } from "vitest";
import { Lazy } from "../src/lib/lazy.svelte";

describe("a component loaded on first use", () => {
  it("loads once, on the first ask, and hands the component over", async () => {
    let loads = 0;
    const lazy = new Lazy<string>(() => {
      loads += 1;
      return Promise.resolve({ default: "screen" });
    });
    expect(loads).toBe(0);
    expect(lazy.get()).toBeNull();
    expect(lazy.get()).toBeNull();
    await Promise.resolve();
    await Promise.resolve();
    expect(lazy.get()).toBe("screen");
    expect(loads).toBe(1);
    expect(lazy.error).toBeNull();
  });

  it("keeps why a load failed, for the window to show", async () => {
    const lazy = new Lazy<string>(() => Promise.reject(new Error("chunk missing")));
    expect(lazy.get()).toBeNull();
    await Promise.resolve();
    await Promise.resolve();
    expect(lazy.get()).toBeNull();
    expect(lazy.error).toContain("chunk missing");
  });
});
