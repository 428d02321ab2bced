import { describe, expect, it } from "vitest";
import type { ApiError } from "../src/bindings";
import { EditStore, type EditPreview } from "../src/lib/editStore.svelte";
import type { Ok } from "../src/lib/result";

/** An answer the test gives when it chooses. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const ok = <T>(data: T): Ok<T> => ({ status: "ok", data });
const refused = (message: string): Ok<never> => ({ status: "error", error: { code: "invalid_config", message } });
const preview = (text: string, errors: string[] = []): EditPreview => ({
  diff: [{ kind: "add", text }],
  errors: errors.map((message) => ({ path: "x", message, line: null, column: null })),
});

/** A one-field form: the draft is a name, saved as it is typed. */
class NameStore extends EditStore<string, EditPreview, string> {
  name = "";
  savedName = "";
  edits = 0;
  previews: { input: string; answer: ReturnType<typeof deferred<Ok<EditPreview>>> }[] = [];
  saveAnswer: Ok<string> = ok("");
  previewErrors: (ApiError | null)[] = [];

  protected editInput(): string | null {
    return this.name === this.savedName ? null : this.name;
  }
  protected sendPreview(input: string) {
    const answer = deferred<Ok<EditPreview>>();
    this.previews.push({ input, answer });
    return answer.promise;
  }
  protected sendSave(input: string) {
    return Promise.resolve(this.saveAnswer.status === "ok" ? ok(input) : this.saveAnswer);
  }
  protected afterSave(result: string): void {
    this.savedName = result;
    this.diff = [];
  }
  protected edited(): void {
    this.edits++;
  }
  protected previewError(e: ApiError | null): void {
    this.previewErrors.push(e);
    super.previewError(e);
  }
  /** Drops the answers on their way, as a store does when its form closes. */
  close() {
    this.forget();
  }
}

describe("edit store", () => {
  it("shows only the newest preview when an older answer arrives last", async () => {
    const s = new NameStore();
    s.name = "a";
    const first = s.preview();
    s.name = "ab";
    const second = s.preview();
    expect(s.previews.map((p) => p.input)).toEqual(["a", "ab"]);
    s.previews[1].answer.resolve(ok(preview("ab", ["too short"])));
    await second;
    s.previews[0].answer.resolve(ok(preview("a")));
    await first;
    expect(s.diff).toEqual([{ kind: "add", text: "ab" }]);
    expect(s.issues.map((i) => i.message)).toEqual(["too short"]);
    expect(s.edits).toBe(2);
  });

  it("drops a failed preview overtaken by a newer one", async () => {
    const s = new NameStore();
    s.name = "a";
    const first = s.preview();
    s.name = "ab";
    const second = s.preview();
    s.previews[1].answer.resolve(ok(preview("ab")));
    await second;
    s.previews[0].answer.resolve(refused("gone"));
    await first;
    expect(s.error).toBeNull();
    expect(s.diff).toHaveLength(1);
  });

  it("a failed preview shows its error and no diff; the next good one clears the error", async () => {
    const s = new NameStore();
    s.name = "a";
    let p = s.preview();
    s.previews[0].answer.resolve(ok(preview("a")));
    await p;
    s.name = "ab";
    p = s.preview();
    s.previews[1].answer.resolve(refused("cannot read config.toml"));
    await p;
    expect(s.error?.message).toBe("cannot read config.toml");
    expect(s.diff).toEqual([]);
    s.name = "abc";
    p = s.preview();
    s.previews[2].answer.resolve(ok(preview("abc")));
    await p;
    expect(s.error).toBeNull();
    expect(s.previewErrors.map((e) => e?.message ?? null)).toEqual([null, "cannot read config.toml", null]);
  });

  it("an unchanged draft is not sent and shows an empty preview", async () => {
    const s = new NameStore();
    s.diff = [{ kind: "add", text: "old" }];
    await s.preview();
    expect(s.previews).toEqual([]);
    expect(s.diff).toEqual([]);
    expect(s.issues).toEqual([]);
    expect(await s.save()).toBe(false);
  });

  it("forgetting drops the answer on its way", async () => {
    const s = new NameStore();
    s.name = "a";
    const p = s.preview();
    s.close();
    s.previews[0].answer.resolve(ok(preview("a")));
    await p;
    expect(s.diff).toEqual([]);
  });

  it("a refused save keeps the draft and the error; an accepted one refreshes the saved state", async () => {
    const s = new NameStore();
    s.name = "alice";
    s.saveAnswer = refused("name taken");
    expect(await s.save()).toBe(false);
    expect(s.error?.message).toBe("name taken");
    expect(s.name).toBe("alice");
    expect(s.savedName).toBe("");
    expect(s.busy).toBe(false);

    s.saveAnswer = ok("");
    const saving = s.save();
    expect(s.busy).toBe(true);
    expect(s.error).toBeNull();
    expect(await saving).toBe(true);
    expect(s.savedName).toBe("alice");
    expect(s.busy).toBe(false);
  });

  it("a preview on its way when the save is accepted is not shown after it", async () => {
    const s = new NameStore();
    s.name = "alice";
    const p = s.preview();
    expect(await s.save()).toBe(true);
    s.previews[0].answer.resolve(ok(preview("alice", ["stale"])));
    await p;
    expect(s.diff).toEqual([]);
    expect(s.issues).toEqual([]);
  });
});
