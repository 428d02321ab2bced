import { describe, expect, it } from "vitest";
import { ALLOWED_ELEMENTS, MarkdownView, renderMarkdown, safeUrl, sanitize, splitBlocks } from "../src/lib/markdown";

/** The elements the window adds around rendered Markdown (code heads, table frames). */
const DECORATION = ["div", "button"];

function render(text: string): HTMLElement {
  const box = document.createElement("div");
  box.append(renderMarkdown(text));
  return box;
}

/** Every element outside the allowlist, every `on*` attribute, every address an element
 * could load or navigate to. */
function hazards(box: HTMLElement): string[] {
  const found: string[] = [];
  for (const el of Array.from(box.querySelectorAll("*"))) {
    const tag = el.localName;
    if (!ALLOWED_ELEMENTS.includes(tag) && !DECORATION.includes(tag)) found.push(`element <${tag}>`);
    for (const a of Array.from(el.attributes)) {
      if (a.name.startsWith("on")) found.push(`attribute ${a.name} on <${tag}>`);
      if (["href", "src", "srcset", "action", "formaction", "xlink:href", "style"].includes(a.name))
        found.push(`attribute ${a.name}=${a.value} on <${tag}>`);
      if (/javascript:|data:/i.test(a.value) && a.name !== "title") found.push(`${a.name}=${a.value}`);
    }
  }
  return found;
}

describe("hostile agent text is shown as text, never as HTML that runs", () => {
  const cases: { name: string; input: string; visible: string }[] = [
    { name: "img onerror", input: "look <img src=x onerror=alert(1)> here", visible: "<img src=x onerror=alert(1)>" },
    { name: "img onerror as a block", input: '<img src=x onerror="window.__pwned=1">', visible: "<img src=x" },
    { name: "script", input: "<script>window.__pwned = 1</script>", visible: "<script>window.__pwned = 1</script>" },
    { name: "javascript: link", input: "[x](javascript:alert(1))", visible: "x" },
    { name: "JaVaScRiPt: link, encoded", input: "[y](JaVa&#x09;ScRiPt:alert(1))", visible: "y" },
    {
      name: "raw anchor",
      input: '<a href="https://evil.example/">click</a>',
      visible: '<a href="https://evil.example/">',
    },
    { name: "svg onload", input: "<svg onload=alert(1)><circle r=4 /></svg>", visible: "<svg onload=alert(1)>" },
    { name: "data: link", input: "[d](data:text/html;base64,PHNjcmlwdD4=)", visible: "d" },
    { name: "data: image", input: "![pic](data:image/png;base64,AAAA)", visible: "[image: pic]" },
    { name: "remote image", input: "![tracker](https://evil.example/t.png)", visible: "[image: tracker]" },
    { name: "HTML entities", input: "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;q&quot;", visible: '<b>bold</b> & "q"' },
    { name: "iframe", input: '<iframe src="https://evil.example"></iframe>', visible: "<iframe" },
    { name: "style tag", input: "<style>body{display:none}</style>", visible: "<style>body{display:none}</style>" },
    { name: "autolink javascript", input: "<javascript:alert(1)>", visible: "javascript:alert(1)" },
    { name: "html in a table cell", input: "| a |\n|---|\n| <img src=x onerror=alert(1)> |", visible: "<img" },
    { name: "html in a heading", input: "# <b onmouseover=alert(1)>hi</b>", visible: "<b onmouseover=alert(1)>" },
    {
      name: "html inside an unhighlighted fence",
      input: "```html\n<img src=x onerror=alert(1)>\n```",
      visible: "<img src=x onerror=alert(1)>",
    },
    {
      name: "html inside a highlighted fence",
      input: "```js\nel.innerHTML = '<img src=x onerror=alert(1)>';\n```",
      visible: "'<img src=x onerror=alert(1)>'",
    },
    { name: "fence language with quotes", input: '```"><img src=x onerror=alert(1)>\ncode\n```', visible: "code" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const box = render(c.input);
      expect(hazards(box)).toEqual([]);
      expect(box.querySelector("img, script, svg, iframe, style, a[href]")).toBeNull();
      expect(box.textContent).toContain(c.visible);
    });
  }

  it("a link keeps no address to follow; a safe one shows it in its tooltip", () => {
    const box = render("[docs](https://example.org/a?b=1) and [bad](javascript:alert(1))");
    const links = box.querySelectorAll("a");
    expect(links).toHaveLength(1);
    expect(links[0].getAttribute("href")).toBeNull();
    expect(links[0].getAttribute("title")).toBe("https://example.org/a?b=1");
    expect(links[0].textContent).toBe("docs");
    expect(box.textContent).toContain("bad");
  });

  it("safeUrl accepts http, https and mailto only", () => {
    expect(safeUrl("https://a.example")).toBe("https://a.example");
    expect(safeUrl("mailto:a@b.c")).toBe("mailto:a@b.c");
    for (const bad of [
      "javascript:alert(1)",
      " JAVASCRIPT:x",
      "data:text/html,x",
      "file:///etc",
      "java\nscript:x",
      "/rel",
    ])
      expect(safeUrl(bad)).toBeNull();
  });

  it("the allowlist pass removes what a renderer bug could let through", () => {
    const t = document.createElement("template");
    t.innerHTML =
      '<p onclick="x()" style="color:red">a<img src=x onerror="y()"><a href="javascript:z()" title="t">b</a>' +
      '<span class="hljs-keyword evil-class">c</span><svg><a href="#">d</a></svg></p><ol start="3x"><li>e</li></ol>';
    sanitize(t.content);
    const box = document.createElement("div");
    box.append(t.content);
    expect(hazards(box)).toEqual([]);
    expect(box.querySelector("span")?.hasAttribute("class")).toBe(false);
    expect(box.querySelector("ol")?.hasAttribute("start")).toBe(false);
    expect(box.textContent).toBe("abcde");
  });
});

describe("Markdown is rendered", () => {
  it("headings, lists, emphasis, inline code, tables and highlighted fences", () => {
    const box = render(
      [
        "# Title",
        "",
        "Some *emphasis*, **strong** and `code`.",
        "",
        "- one",
        "- two",
        "",
        "1. first",
        "2. second",
        "",
        "| Name | Size |",
        "|:-----|-----:|",
        "| a    | 1    |",
        "",
        "```rust",
        'fn main() { println!("hi"); }',
        "```",
      ].join("\n"),
    );
    expect(box.querySelector("h1")?.textContent).toBe("Title");
    expect(box.querySelector("em")?.textContent).toBe("emphasis");
    expect(box.querySelector("strong")?.textContent).toBe("strong");
    expect(box.querySelector("p > code")?.textContent).toBe("code");
    expect(Array.from(box.querySelectorAll("ul > li")).map((l) => l.textContent)).toEqual(["one", "two"]);
    expect(box.querySelectorAll("ol > li")).toHaveLength(2);
    expect(box.querySelector(".md-table > table th")?.textContent).toBe("Name");
    expect(box.querySelector("td[align=right]")?.textContent).toBe("1");
    const code = box.querySelector(".md-code pre code.language-rust");
    expect(code?.textContent).toBe('fn main() { println!("hi"); }');
    expect(code?.querySelector("span.hljs-keyword")?.textContent).toBe("fn");
    expect(box.querySelector(".md-code .md-code-lang")?.textContent).toBe("rust");
    expect(box.querySelector(".md-code button[data-testid=md-copy]")?.textContent).toBe("Copy");
    expect(hazards(box)).toEqual([]);
  });

  it("an unknown fence language is shown plain; toml is highlighted", () => {
    expect(render("```brainfuck\n+++.\n```").querySelector("pre code span")).toBeNull();
    expect(render('```toml\n[a]\nb = "c"\n```').querySelector("pre code span")).not.toBeNull();
  });

  it("a fence still streaming (not closed yet) is shown as code", () => {
    const box = render("Here:\n\n```python\ndef f(x):\n    return");
    expect(box.querySelector("pre code")?.textContent).toBe("def f(x):\n    return");
    expect(box.querySelector("p")?.textContent).toBe("Here:");
  });
});

describe("streaming", () => {
  it("splitBlocks splits at blank lines between top-level blocks only", () => {
    expect(splitBlocks("a\n\nb")).toEqual(["a", "b"]);
    expect(splitBlocks("- a\n\n- b\n\nafter")).toEqual(["- a\n\n- b", "after"]);
    expect(splitBlocks("```\nx\n\ny\n```\n\nz")).toEqual(["```\nx\n\ny\n```", "z"]);
    expect(splitBlocks("1. a\n\n2. b")).toEqual(["1. a\n\n2. b"]);
    expect(splitBlocks("")).toEqual([""]);
  });

  it("only the blocks that changed are rendered again", () => {
    const el = document.createElement("div");
    const view = new MarkdownView(el);
    view.set("# Head\n\nfirst", false);
    const head = el.querySelector("h1");
    view.set("# Head\n\nfirst para", false);
    expect(el.querySelector("h1")).toBe(head);
    expect(el.textContent?.replace(/\n/g, "")).toBe("Headfirst para");
    view.set("# Head\n\nfirst para\n\nsecond", false);
    expect(el.querySelector("h1")).toBe(head);
    expect(Array.from(el.querySelectorAll("p")).map((p) => p.textContent)).toEqual(["first para", "second"]);
    view.destroy();
  });

  it("a long streamed answer renders each block a bounded number of times", () => {
    const el = document.createElement("div");
    const view = new MarkdownView(el);
    let text = "";
    for (let i = 0; i < 400; i++) {
      text += i % 10 === 9 ? `word${i}\n\n` : `word${i} `;
      view.set(text, false);
    }
    // 40 paragraphs; the first one's DOM was made once and kept.
    const first = el.querySelector("p");
    view.set(text + "tail", false);
    expect(el.querySelector("p")).toBe(first);
    expect(el.querySelectorAll("p")).toHaveLength(41);
    view.destroy();
  });

  it("Copy puts the code on the clipboard and says so", async () => {
    const written: string[] = [];
    Object.defineProperty(navigator, "clipboard", {
      value: { writeText: async (t: string) => void written.push(t) },
      configurable: true,
    });
    const el = document.createElement("div");
    document.body.append(el);
    const view = new MarkdownView(el);
    view.set("```bash\necho hi\n```", false);
    const button = el.querySelector<HTMLButtonElement>("button.md-copy");
    button?.click();
    await new Promise((r) => setTimeout(r, 0));
    expect(written).toEqual(["echo hi"]);
    expect(button?.textContent).toBe("Copied");
    view.destroy();
    el.remove();
  });
});
