#!/usr/bin/env python3
"""Circles between the top-level modules of each crate (`crate::a` used in module b and
`crate::b` in module a, or longer rings). A circle is allowed only when it is listed in
scripts/module_cycles.allowed with the reason it exists; a new one fails the check, and a listed
one that no longer exists must be removed from the list (so the list stays the truth).

Usage: scripts/check_module_cycles.py [--print]   (--print lists every circle found)
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = sorted(p / "src" for p in (ROOT / "crates").iterdir() if (p / "src").is_dir())
SOURCES.append(ROOT / "src-tauri")
ALLOWED = ROOT / "scripts" / "module_cycles.allowed"

USE = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
SUPER = re.compile(r"\bsuper::([a-z_][a-z0-9_]*)")
GROUP = re.compile(r"\b(?:crate|super)::\{([^}]*)\}", re.S)


def top_module(src: pathlib.Path, file: pathlib.Path) -> str | None:
    rel = file.relative_to(src)
    if len(rel.parts) == 1:
        stem = rel.stem
        return None if stem in ("lib", "main") else stem
    return rel.parts[0]


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def edges(src: pathlib.Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    files = [f for f in src.rglob("*.rs") if "tests" not in f.relative_to(src).parts]
    mods = {m for f in files if (m := top_module(src, f))}
    for f in files:
        m = top_module(src, f)
        if m is None:
            continue
        text = strip_comments(f.read_text())
        # `#[cfg(test)] mod tests { ... }` bodies count too: a test module is part of its
        # module; the circles that matter are the ones in the build, so tests are left out by
        # cutting at the first `#[cfg(test)]`.
        text = text.split("#[cfg(test)]", 1)[0]
        names = set(USE.findall(text))
        for group in GROUP.findall(text):
            names.update(n.strip().split("::", 1)[0] for n in group.split(","))
        if len(f.relative_to(src).parts) == 1:
            names.update(SUPER.findall(text))
        for n in names:
            if n in mods and n != m:
                out.setdefault(m, set()).add(n)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    found: set[str] = set()
    for src in SOURCES:
        crate = src.parent.name if src.name == "src" else "warren-desktop"
        for comp in cycles(edges(src)):
            found.add(f"{crate}: {' '.join(comp)}")
    allowed: dict[str, str] = {}
    for line in ALLOWED.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            ring, _, why = line.partition(" -- ")
            allowed[ring.strip()] = why.strip()
    if "--print" in sys.argv:
        for f in sorted(found):
            print(f)
    bad = False
    for f in sorted(found - allowed.keys()):
        print(f"a circle between modules that is not allowed: {f}", file=sys.stderr)
        bad = True
    for f in sorted(allowed.keys() - found):
        print(f"scripts/module_cycles.allowed lists a circle that is gone (remove it): {f}", file=sys.stderr)
        bad = True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
