#!/usr/bin/env python3
"""Circles between the modules of each crate (`crate::a` used in module b and `crate::b` in
module a, or longer rings), at every level: between the top-level modules, and between the
children of each folder module (`super::kit` in `turn/delegate.rs` and `super::delegate` in
`turn/kit.rs` make the circle `turn::delegate turn::kit`). A circle is allowed only when it is listed in
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

# A path from the crate root or from the file's own module: `crate::a::b`, `super::super::a`,
# `self::a`, possibly ending in a `{...}` group (whose items are paths below it).
PATH = re.compile(
    r"\b(crate|self|super(?:::super)*)((?:::[A-Za-z_][A-Za-z0-9_]*)*)(?:::\{([^{}]*)\})?"
)


def module_path(src: pathlib.Path, file: pathlib.Path) -> tuple[str, ...]:
    """The module a file is: `turn/kit.rs` is `turn::kit`, `turn/mod.rs` is `turn`."""
    parts = file.relative_to(src).parts
    if parts[-1] == "mod.rs" or (len(parts) == 1 and parts[0] in ("lib.rs", "main.rs")):
        return tuple(parts[:-1])
    return tuple(parts[:-1]) + (pathlib.Path(parts[-1]).stem,)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def references(module: tuple[str, ...], text: str) -> set[tuple[str, ...]]:
    """The paths a module's text names, made absolute (from the crate root)."""
    out: set[tuple[str, ...]] = set()
    for head, rest, group in PATH.findall(text):
        if head == "crate":
            base: tuple[str, ...] = ()
        elif head == "self":
            base = module
        else:
            ups = head.count("super")
            if ups > len(module):
                continue
            base = module[: len(module) - ups]
        path = base + tuple(p for p in rest.split("::") if p)
        if group:
            for item in group.split(","):
                first = item.strip().split("::", 1)[0].split(" ", 1)[0]
                if first and first != "self":
                    out.add(path + (first,))
                elif first == "self":
                    out.add(path)
        else:
            out.add(path)
    return out


def edges(src: pathlib.Path) -> dict[tuple[str, ...], dict[str, set[str]]]:
    """For each folder module (the crate root is `()`), the references between its child
    modules: `a` -> `b` when code in `a` (or below it) names `b` (or something in it)."""
    out: dict[tuple[str, ...], dict[str, set[str]]] = {}
    files = [f for f in src.rglob("*.rs") if "tests" not in f.relative_to(src).parts]
    mods: set[tuple[str, ...]] = set()
    for f in files:
        m = module_path(src, f)
        mods.update(m[:i] for i in range(1, len(m) + 1))
    for f in files:
        m = module_path(src, f)
        text = strip_comments(f.read_text())
        # `#[cfg(test)] mod tests { ... }` bodies count too: a test module is part of its
        # module; the circles that matter are the ones in the build, so tests are left out by
        # cutting at the first `#[cfg(test)]`.
        text = text.split("#[cfg(test)]", 1)[0]
        for r in references(m, text):
            # The folder both live in: their longest common prefix. `m` and `r` are siblings
            # (or inside siblings) there.
            n = 0
            while n < min(len(m), len(r)) and m[n] == r[n]:
                n += 1
            if n >= len(m) or n >= len(r) or r[: n + 1] not in mods:
                continue
            out.setdefault(m[:n], {}).setdefault(m[n], set()).add(r[n])
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
        for folder, graph in sorted(edges(src).items()):
            prefix = "".join(f"{p}::" for p in folder)
            for comp in cycles(graph):
                found.add(f"{crate}: {' '.join(prefix + c for c in comp)}")
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
