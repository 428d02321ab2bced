#!/usr/bin/env python3
"""Checks the licenses of everything Warren ships: every crate in Cargo.lock that a workspace
member depends on (normal and build dependencies, all platforms) and the npm packages bundled
into the window (ui/ production dependencies and what the UI build compiles in, svelte).

A license expression passes when it can be satisfied with licenses on the allow list (an OR
needs one acceptable side, an AND needs all). Prints each refused package with its license and
exits 1 when there is one. Needs only cargo (metadata from Cargo.lock) and the installed
ui/node_modules."""
import json
import pathlib
import re
import subprocess
import sys

ALLOWED = {
    "MIT", "MIT-0", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-2-Clause",
    "BSD-3-Clause", "ISC", "Zlib", "Unicode-3.0", "Unicode-DFS-2016", "MPL-2.0", "CC0-1.0",
    "0BSD", "BSL-1.0", "Unlicense", "CDLA-Permissive-2.0",
}
ROOT = pathlib.Path(__file__).resolve().parent.parent


def tokens(expr):
    expr = expr.replace("/", " OR ")  # old crates write "MIT/Apache-2.0"
    return re.findall(r"\(|\)|[A-Za-z0-9.+-]+(?: WITH [A-Za-z0-9.+-]+)?", expr)


def satisfiable(expr):
    toks = tokens(expr)
    pos = 0

    def atom():
        nonlocal pos
        t = toks[pos]
        pos += 1
        if t == "(":
            v = disj()
            pos += 1  # ")"
            return v
        return t in ALLOWED or t.rstrip("+") in ALLOWED

    def conj():
        nonlocal pos
        v = atom()
        while pos < len(toks) and toks[pos] == "AND":
            pos += 1
            v = atom() and v
        return v

    def disj():
        nonlocal pos
        v = conj()
        while pos < len(toks) and toks[pos] == "OR":
            pos += 1
            v = conj() or v
        return v

    try:
        return bool(toks) and disj() and pos == len(toks)
    except IndexError:
        return False


def crates():
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--locked"], cwd=ROOT))
    members = set(meta["workspace_members"])
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    pkgs = {p["id"]: p for p in meta["packages"]}
    seen, todo = set(), list(members)
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        for d in nodes[pid]["deps"]:
            kinds = {k["kind"] for k in d["dep_kinds"]}
            if kinds - {"dev"}:
                todo.append(d["pkg"])
    for pid in sorted(seen - members):
        p = pkgs[pid]
        yield f"crate {p['name']} {p['version']}", p.get("license") or ""


def npm():
    ui = ROOT / "ui"
    modules = ui / "node_modules"
    if not modules.is_dir():
        print("check_licenses: ui/node_modules is missing (run npm ci in ui/)", file=sys.stderr)
        sys.exit(2)
    pkg = json.loads((ui / "package.json").read_text())
    todo = list(pkg.get("dependencies", {})) + ["svelte"]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = modules / name / "package.json"
        if not path.exists():
            continue
        p = json.loads(path.read_text())
        lic = p.get("license") or ""
        if isinstance(lic, dict):
            lic = lic.get("type", "")
        yield f"npm {name} {p.get('version', '?')}", lic
        todo.extend(p.get("dependencies", {}))


def main():
    refused, count = [], 0
    for what, lic in list(crates()) + list(npm()):
        count += 1
        if not satisfiable(lic):
            refused.append(f"{what}: {lic or '(no license given)'}")
    for r in refused:
        print(f"license not allowed: {r}")
    print(f"licenses: {count} packages checked, {len(refused)} refused")
    sys.exit(1 if refused else 0)


if __name__ == "__main__":
    main()
