#!/usr/bin/env python3
"""Checks the licenses of the npm packages bundled into the window (ui/ production dependencies
and what the UI build compiles in, svelte) against the allow list of deny.toml, which
`cargo deny check licenses` holds the crates to (cargo deny reads only Cargo's packages).

A license expression passes when it can be satisfied with licenses on the allow list (an OR
needs one acceptable side, an AND needs all). Prints each refused package with its license and
exits 1 when there is one. Needs only the installed ui/node_modules."""
import json
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
ALLOWED = set(tomllib.loads((ROOT / "deny.toml").read_text())["licenses"]["allow"])


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
    for what, lic in npm():
        count += 1
        if not satisfiable(lic):
            refused.append(f"{what}: {lic or '(no license given)'}")
    for r in refused:
        print(f"license not allowed: {r}")
    print(f"licenses: {count} npm packages checked, {len(refused)} refused")
    sys.exit(1 if refused else 0)


if __name__ == "__main__":
    main()
