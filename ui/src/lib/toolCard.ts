// What a tool call's card shows: a one-line summary of its arguments, its status in words,
// arguments and results pretty-printed and clipped, and a failed call's error code apart from
// its message.

import type { ToolState } from "./timeline";

/** The status a card shows. */
export function stateLabel(state: ToolState): string {
  switch (state) {
    case "running":
      return "running";
    case "waiting":
      return "waiting for approval";
    case "ok":
      return "ok";
    case "failed":
      return "error";
    case "denied":
      return "denied";
  }
}

/** A card is open while its call runs, waits for approval or ended in an error; folded once
 * it finished well (or was denied, which its decision line already says). */
export function openByDefault(state: ToolState): boolean {
  return state === "running" || state === "waiting" || state === "failed";
}

/** `text` as indented JSON when it is JSON, else as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function oneLine(s: string, max = 90): string {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The argument keys that best say what a call does, in order of preference. */
const SUMMARY_KEYS = ["command", "path", "query", "pattern", "agent", "url", "key", "name", "operation", "prompt"];

/** One line saying what a call does: its most telling argument (`path: src/a.rs`), else its
 * first argument, else the arguments as written. */
export function toolSummary(args: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return oneLine(args);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return oneLine(args);
  const obj = parsed as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length === 0) return "";
  const key = SUMMARY_KEYS.find((k) => k in obj && obj[k] !== null) ?? keys[0];
  const v = obj[key];
  const shown = typeof v === "string" ? v : JSON.stringify(v);
  return oneLine(`${key}: ${shown}`);
}

/** A failed call's error as the runtime reports it (`{"code", "message", "rule"?}`). */
export interface ToolError {
  code: string;
  message: string;
  rule: string | null;
}

/** The error a failed call's output carries, or null when it is not a coded error. */
export function toolError(output: string | null): ToolError | null {
  if (output === null) return null;
  try {
    const v = JSON.parse(output) as Record<string, unknown>;
    if (v && typeof v.code === "string" && typeof v.message === "string") {
      return { code: v.code, message: v.message, rule: typeof v.rule === "string" ? v.rule : null };
    }
  } catch {
    // Not JSON: the output is shown as it is.
  }
  return null;
}

/** How much of a long result a card shows before "Show all". */
export const CLIP_LINES = 12;
export const CLIP_CHARS = 1500;

/** The first `CLIP_LINES` lines (at most `CLIP_CHARS` characters) of `text`, and whether
 * anything was left out. */
export function clip(text: string): { shown: string; clipped: boolean } {
  let end = text.length;
  let lines = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\n" && ++lines === CLIP_LINES) {
      end = i;
      break;
    }
  }
  end = Math.min(end, CLIP_CHARS);
  return end < text.length ? { shown: text.slice(0, end), clipped: true } : { shown: text, clipped: false };
}
