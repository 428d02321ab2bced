// Agent text as Markdown, made safe to show: headings, lists, emphasis, links, code (fenced code
// highlighted, with a Copy button) and tables. Agent text is never HTML the webview runs: raw
// HTML in the text is rendered as text, links point nowhere (their address is in the tooltip),
// images are shown by their description, and the DOM built from the rendered HTML goes through
// an allowlist (elements, attributes, class names) before it is shown. Streaming text is
// rendered block by block: the blocks that did not change keep their DOM.

import { Marked, type Tokens } from "marked";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";

hljs.registerLanguage("rust", rust);
hljs.registerLanguage("typescript", typescript);
hljs.registerLanguage("javascript", javascript);
hljs.registerLanguage("python", python);
hljs.registerLanguage("bash", bash);
hljs.registerLanguage("shell", shell);
hljs.registerLanguage("json", json);
hljs.registerLanguage("ini", ini);
hljs.registerLanguage("diff", diff);
hljs.registerLanguage("sql", sql);
hljs.registerLanguage("go", go);
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["sh", "zsh"], { languageName: "bash" });
hljs.registerAliases(["console"], { languageName: "shell" });
hljs.registerAliases(["patch"], { languageName: "diff" });

/** Elements the rendered Markdown may hold, with the attributes each may keep. */
const ALLOWED: Record<string, readonly string[]> = {
  p: [],
  h1: [],
  h2: [],
  h3: [],
  h4: [],
  h5: [],
  h6: [],
  ul: [],
  ol: ["start"],
  li: [],
  strong: [],
  em: [],
  del: [],
  code: ["class"],
  pre: [],
  blockquote: [],
  hr: [],
  br: [],
  table: [],
  thead: [],
  tbody: [],
  tr: [],
  th: ["align"],
  td: ["align"],
  a: ["title", "class"],
  span: ["class", "title"],
};

/** The element names the rendered Markdown may hold. */
export const ALLOWED_ELEMENTS: readonly string[] = Object.keys(ALLOWED);

const CLASS_OK = /^(hljs|hljs-[a-z_-]+|language-[a-z0-9_+-]+|md-[a-z-]+|[a-z_]+_)$/;
const ATTR_OK: Record<string, (v: string) => boolean> = {
  start: (v) => /^\d{1,9}$/.test(v),
  align: (v) => v === "left" || v === "center" || v === "right",
  title: () => true,
  class: (v) => v.split(/\s+/).every((c) => c === "" || CLASS_OK.test(c)),
};

function escape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** The address a link may show in its tooltip: http(s) and mailto only (a `javascript:`,
 * `data:` or `file:` address, or one with control characters, is not shown as a link). */
export function safeUrl(href: string): string | null {
  const trimmed = href.trim();
  // Browsers ignore control characters and whitespace inside a scheme (`java\nscript:`).
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return null;
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed);
  if (!scheme) return null;
  const s = scheme[1].toLowerCase();
  return s === "http" || s === "https" || s === "mailto" ? trimmed : null;
}

/** The registered highlighting language for a fence's info string, if any. */
function language(lang: string | undefined): string | null {
  const name = (lang ?? "").trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  return name && hljs.getLanguage(name) ? name : null;
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    // Raw HTML in agent text is shown as the text it is.
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escape(text);
    },
    link({ href, tokens }: Tokens.Link): string {
      const inner = this.parser.parseInline(tokens);
      const url = safeUrl(href);
      if (url === null) return `<span class="md-link-refused">${inner}</span>`;
      return `<a class="md-link" title="${escape(url)}">${inner}</a>`;
    },
    image({ href, text }: Tokens.Image): string {
      const url = safeUrl(href);
      const title = url === null ? "" : ` title="${escape(url)}"`;
      return `<span class="md-image"${title}>[image: ${escape(text)}]</span>`;
    },
    checkbox({ checked }: Tokens.Checkbox): string {
      return `<span class="md-check">${checked ? "[x]" : "[ ]"}</span> `;
    },
    code({ text, lang }: Tokens.Code): string {
      const l = language(lang);
      const body = l ? hljs.highlight(text, { language: l, ignoreIllegals: true }).value : escape(text);
      const cls = l ? `hljs language-${l}` : "hljs";
      return `<pre><code class="${cls}">${body}</code></pre>\n`;
    },
  },
});

/** Keeps only what the allowlist allows, in place: an element outside it becomes its text,
 * an attribute outside it is removed. */
export function sanitize(root: ParentNode): void {
  for (const node of Array.from(root.childNodes)) {
    if (node.nodeType === 3) continue; // text
    if (node.nodeType !== 1) {
      node.parentNode?.removeChild(node); // comments, processing instructions
      continue;
    }
    const el = node as Element;
    const tag = el.localName;
    const allowed = Object.prototype.hasOwnProperty.call(ALLOWED, tag) ? ALLOWED[tag] : null;
    if (allowed === null || el.namespaceURI !== "http://www.w3.org/1999/xhtml") {
      el.replaceWith(el.ownerDocument.createTextNode(el.textContent ?? ""));
      continue;
    }
    for (const attr of Array.from(el.attributes)) {
      const check = ATTR_OK[attr.name];
      if (!allowed.includes(attr.name) || !check || !check(attr.value)) el.removeAttribute(attr.name);
    }
    sanitize(el);
  }
}

/** Adds what the window gives rendered Markdown: a head with the language and a Copy button on
 * each code block, a scrolling frame around each table. */
function decorate(root: DocumentFragment): void {
  const doc = root.ownerDocument;
  for (const pre of Array.from(root.querySelectorAll("pre"))) {
    const box = doc.createElement("div");
    box.className = "md-code";
    const head = doc.createElement("div");
    head.className = "md-code-head";
    const lang = /language-([a-z0-9_+-]+)/.exec(pre.querySelector("code")?.className ?? "")?.[1] ?? "";
    const label = doc.createElement("span");
    label.className = "md-code-lang";
    label.textContent = lang;
    const copy = doc.createElement("button");
    copy.type = "button";
    copy.className = "md-copy";
    copy.dataset.testid = "md-copy";
    copy.textContent = "Copy";
    head.append(label, copy);
    pre.replaceWith(box);
    box.append(head, pre);
  }
  for (const table of Array.from(root.querySelectorAll("table"))) {
    const frame = doc.createElement("div");
    frame.className = "md-table";
    table.replaceWith(frame);
    frame.append(table);
  }
}

/** `text` rendered as Markdown into a sanitised fragment of `doc`. */
export function renderMarkdown(text: string, doc: Document = document): DocumentFragment {
  const html = marked.parse(text, { async: false });
  const template = doc.createElement("template");
  // A template's content is inert: nothing in it loads or runs while it is sanitised.
  template.innerHTML = html;
  const fragment = template.content;
  sanitize(fragment);
  decorate(fragment);
  return doc.importNode(fragment, true);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** A line that may continue the block above it across a blank line (list items, indented
 * continuation, quotes, tables, reference definitions). */
const CONTINUES = /^(\s|[-*+>|[]|\d{1,9}[.)])/;

/**
 * Splits Markdown into blocks that render the same apart as together: at a blank line outside
 * a code fence that is followed by a line starting a new top-level block. Joining the blocks
 * with "\n\n" gives the text back.
 */
export function splitBlocks(text: string): string[] {
  const lines = text.split("\n");
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const open = FENCE.exec(line);
    if (fence === null && open) fence = open[1];
    else if (fence !== null && open && open[1][0] === fence[0] && open[1].length >= fence.length) fence = null;
    if (
      fence === null &&
      line.trim() === "" &&
      current.length > 0 &&
      i + 1 < lines.length &&
      lines[i + 1].trim() !== "" &&
      !CONTINUES.test(lines[i + 1])
    ) {
      blocks.push(current.join("\n"));
      current = [];
      continue;
    }
    current.push(line);
  }
  if (current.length > 0 || blocks.length === 0) blocks.push(current.join("\n"));
  return blocks;
}

/** Copies `text` to the clipboard; false when the webview refuses. */
async function copyText(text: string, doc: Document): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Older webviews: a selection and the copy command.
    const area = doc.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    doc.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = doc.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

/** How long streaming text waits at least between two renders. */
const RENDER_EVERY_MS = 60;

/**
 * Renders text as Markdown into an element and keeps it current as the text grows: only the
 * blocks that changed are rendered again, at most every 60 ms while the text streams, at once
 * when it stops. Handles the Copy buttons of its code blocks.
 */
export class MarkdownView {
  #el: HTMLElement;
  #blocks: { src: string; node: HTMLElement }[] = [];
  #text = "";
  #timer: ReturnType<typeof setTimeout> | null = null;
  #last = 0;

  constructor(el: HTMLElement) {
    this.#el = el;
    el.addEventListener("click", this.#onClick);
  }

  /** Shows `text`; while `streaming`, renders are spaced out. */
  set(text: string, streaming: boolean): void {
    this.#text = text;
    const wait = RENDER_EVERY_MS - (Date.now() - this.#last);
    if (!streaming || wait <= 0) {
      this.#render();
    } else if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#render(), wait);
    }
  }

  #render(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#last = Date.now();
    const doc = this.#el.ownerDocument;
    const blocks = splitBlocks(this.#text);
    let same = 0;
    while (same < blocks.length && same < this.#blocks.length && blocks[same] === this.#blocks[same].src) same++;
    for (const old of this.#blocks.splice(same)) old.node.remove();
    for (const src of blocks.slice(same)) {
      const node = doc.createElement("div");
      node.className = "md-block";
      node.append(renderMarkdown(src, doc));
      this.#el.append(node);
      this.#blocks.push({ src, node });
    }
  }

  #onClick = (e: Event): void => {
    const target = e.target as Element | null;
    const button = target?.closest?.("button.md-copy");
    if (!button || !this.#el.contains(button)) return;
    const code = button.closest(".md-code")?.querySelector("pre code")?.textContent ?? "";
    void copyText(code, this.#el.ownerDocument).then((ok) => {
      button.textContent = ok ? "Copied" : "Copy failed";
      button.setAttribute("data-copied", ok ? "true" : "false");
      setTimeout(() => {
        button.textContent = "Copy";
        button.removeAttribute("data-copied");
      }, 2000);
    });
  };

  /** Stops pending renders and listening. */
  destroy(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#el.removeEventListener("click", this.#onClick);
  }
}
