#!/usr/bin/env python3
"""Times whole `warren` commands (release build) and prints median / p95 wall times.

Usage: bench_cli.py WARREN_BINARY
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def config_with_agents(n: int) -> str:
    out = ["schema_version = 1", "", "[risk_profiles.p]", 'level = "supervised"', "",
           "[runtime_profiles.r]", "max_tool_iterations = 8", "",
           "[providers.models.openai.main]", 'model = "m"', 'fallbacks = ["ollama.local"]', "",
           "[providers.models.ollama.local]", 'model = "llama"', ""]
    for i in range(n):
        a = f"agent_{i:03d}"
        peer = f"agent_{(i + 1) % n:03d}"
        other = f"agent_{(i + 2) % n:03d}"
        out += [f"# agent {i}", f"[agents.{a}]", 'risk_profile = "p"', 'runtime_profile = "r"',
                'model_provider = "openai.main"', f'delegates = ["{peer}"]',
                f"[agents.{a}.workspace]",
                f'read_memory_from = ["{peer}", {{ agent = "{other}", categories = ["core"] }}]',
                f"[agents.{a}.workspace.access]", f'{peer} = "read"', f'{other} = "read_write"', ""]
    return "\n".join(out)


def timeit(argv, runs=40, env=None):
    samples = []
    for _ in range(3):
        subprocess.run(argv, capture_output=True, env=env, check=False)
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, env=env, check=False)
        samples.append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed: {p.stderr.decode()}")
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main():
    warren = sys.argv[1]
    rows = []
    with tempfile.TemporaryDirectory() as home:
        path = os.path.join(home, "config.toml")
        with open(path, "w") as f:
            f.write(config_with_agents(200))
        os.chmod(path, 0o600)
        med, p95 = timeit([warren, "--home", home, "config", "validate"])
        rows.append(("warren config validate (200 agents)", med, p95, "< 50 ms"))
        med, p95 = timeit([warren, "--version"])
        rows.append(("warren --version", med, p95, "< 10 ms"))
        extra = os.environ.get("WARREN_BENCH_EXTRA", "")
        for spec in filter(None, extra.split(";")):
            label, target, *argv = spec.split("|")
            med, p95 = timeit([warren, "--home", home] + argv)
            rows.append((label, med, p95, target))
    print(f"{'command':<44} {'median':>10} {'p95':>10}  target")
    for label, med, p95, target in rows:
        print(f"{label:<44} {med:>8.2f}ms {p95:>8.2f}ms  {target}")


if __name__ == "__main__":
    main()
