#!/usr/bin/env python3
"""What each of margin's start-up tricks saves (Sources/MarginCLI/StartupTricks.swift): the
median wall time of a few everyday commands with every trick on, with each turned off in turn
(MARGIN_PLAIN=NAME), with all off, and the same commands run by margin-full (the split into two
executables). Prints a Markdown table for bench/RESULTS.md.

Usage: startup-tricks.py [--margin PATH] [--runs N]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TRICKS = ["one-thread", "lazy-poppler"]


def median_ms(command, env, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--margin", default=os.path.join(ROOT, ".build/release/margin"))
    parser.add_argument("--runs", type=int, default=41)
    options = parser.parse_args()
    full = os.path.join(os.path.dirname(options.margin), "margin-full")
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, MARGIN_HOME=home)
        pdfs = [os.path.join(ROOT, "fixtures/pdf", name) for name in ("sample.pdf", "second.pdf", "outlined.pdf")]
        subprocess.run([options.margin, "add", "--quiet"] + pdfs, env=env, check=True, stdout=subprocess.DEVNULL)
        commands = [["--version"], ["list"], ["search", "quick brown"], ["show", "1"]]
        settings = [("all on", None)] + [(f"{t} off", t) for t in TRICKS] + [("all off", "all")]
        print(f"Median of {options.runs} runs, ms (a library of 3 books; `MARGIN_PLAIN=NAME` turns a trick off).")
        print()
        print("| setting | " + " | ".join(f"`margin {' '.join(c)}`" for c in commands) + " |")
        print("|---|" + "---:|" * len(commands))
        base = []
        for label, plain in settings:
            run_env = dict(env)
            if plain:
                run_env["MARGIN_PLAIN"] = plain
            row = [median_ms([options.margin] + c, run_env, options.runs) for c in commands]
            if not base:
                base = row
                cells = [f"{v:.2f}" for v in row]
            else:
                cells = [f"{v:.2f} ({v - b:+.2f})" for v, b in zip(row, base)]
            print(f"| {label} | " + " | ".join(cells) + " |")
        row = [median_ms([full] + c, env, options.runs) for c in commands]
        print("| margin-full (no split) | " + " | ".join(f"{v:.2f} ({v - b:+.2f})" for v, b in zip(row, base)) + " |")


if __name__ == "__main__":
    main()
