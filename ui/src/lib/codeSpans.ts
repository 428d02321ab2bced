// Messages from the backend quote config keys and values in backticks (`[memory.postgres] url`).
// The window shows those parts as code instead of showing the backticks.

/** One piece of a message: plain text, or what stood between a pair of backticks. */
export interface Span {
  text: string;
  code: boolean;
}

/** `text` cut at its backticks; an unpaired backtick stays as it is, in plain text. */
export function codeSpans(text: string): Span[] {
  const parts = text.split("`");
  const out: Span[] = [];
  // An even number of pieces means one backtick has no partner: the last piece is plain,
  // its opening backtick kept.
  const paired = parts.length % 2 === 1 ? parts.length : parts.length - 1;
  for (let i = 0; i < paired; i++) {
    if (parts[i] !== "") out.push({ text: parts[i], code: i % 2 === 1 });
  }
  if (paired < parts.length) {
    const rest = "`" + parts[paired];
    const last = out[out.length - 1];
    if (last && !last.code) last.text += rest;
    else out.push({ text: rest, code: false });
  }
  return out;
}
