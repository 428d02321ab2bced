import { describe, expect, it } from "vitest";
import { codeSpans } from "../src/lib/codeSpans";

describe("codeSpans", () => {
  it("shows backtick-quoted parts as code and drops the backticks", () => {
    expect(codeSpans("but `[memory.postgres] url` is not set")).toEqual([
      { text: "but ", code: false },
      { text: "[memory.postgres] url", code: true },
      { text: " is not set", code: false },
    ]);
  });

  it("keeps text without backticks whole", () => {
    expect(codeSpans("nothing quoted")).toEqual([{ text: "nothing quoted", code: false }]);
    expect(codeSpans("")).toEqual([]);
  });

  it("leaves an unpaired backtick in plain text", () => {
    expect(codeSpans("a `b` c `d")).toEqual([
      { text: "a ", code: false },
      { text: "b", code: true },
      { text: " c `d", code: false },
    ]);
    expect(codeSpans("`x` `")).toEqual([
      { text: "x", code: true },
      { text: " `", code: false },
    ]);
  });
});
