#!/usr/bin/env python3
"""Scores margin's metadata detection against the judged set (judged.tsv): adds each PDF of
../shared/corpus to a new library with the margin given, and compares the title, the authors
and the year it found with what a reader of page 1 gives. Prints each document's result and
the share of exact answers per field (a Markdown table with --markdown, for bench/RESULTS.md).

Exact means equal after Unicode NFC (a ligature such as U+FB00 is not its letters), typographic quotes as
plain ones and white space collapsed; an author list is exact when every name is, in order.

Usage: score.py [--margin PATH] [--corpus DIR] [--markdown]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def normal(text):
    text = unicodedata.normalize("NFC", text or "")
    for curly, plain in (("\u2019", "'"), ("\u2018", "'"), ("\u201c", '"'), ("\u201d", '"')):
        text = text.replace(curly, plain)
    return " ".join(text.split())


def names(text):
    return [normal(n) for n in (text or "").split(",") if normal(n)]


def judged(path):
    rows = []
    with open(path, encoding="utf-8") as handle:
        lines = [line.rstrip("\n") for line in handle if not line.startswith("#")]
    header = lines[0].split("\t")
    for line in lines[1:]:
        if line.strip():
            rows.append(dict(zip(header, line.split("\t"))))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--margin", default=os.path.join(ROOT, ".build/release/margin"))
    parser.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "corpus"))
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args()
    rows = judged(os.path.join(HERE, "judged.tsv"))
    tally = {field: [0, 0] for field in ("title", "authors", "year")}
    report = []
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, MARGIN_HOME=home)
        for row in rows:
            path = os.path.join(options.corpus, row["path"])
            result = subprocess.run([options.margin, "add", "--quiet", "--json", path], env=env,
                                    capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit(f"margin add {path} failed: {result.stderr.strip()}")
            book = json.loads(result.stdout)[0]["book"]
            fallback = os.path.splitext(os.path.basename(path))[0]
            verdicts = {}
            # The title: one of the reader's, or the file's name where the page shows none.
            if row["title"] != "?":
                wanted = [fallback] if row["title"] == "-" else [normal(t) for t in row["title"].split(" | ")]
                verdicts["title"] = (normal(book["title"]) in wanted, book["title"], " | ".join(wanted))
            if row["authors"] != "?":
                wanted = [] if row["authors"] == "-" else names(row["authors"])
                verdicts["authors"] = (names(book["author"]) == wanted, book["author"] or "-", row["authors"])
            if row["year"] != "?":
                wanted = None if row["year"] == "-" else int(row["year"])
                verdicts["year"] = (book["year"] == wanted, book["year"], row["year"])
            for field, (right, _, _) in verdicts.items():
                tally[field][0] += right
                tally[field][1] += 1
            report.append((row["path"], verdicts))
    if options.markdown:
        print("| field | exact | judged | precision |")
        print("|---|---:|---:|---:|")
        for field, (right, total) in tally.items():
            print(f"| {field} | {right} | {total} | {100 * right / max(total, 1):.0f} % |")
        wrong = [(p, f, got, want) for p, v in report for f, (ok, got, want) in v.items() if not ok]
        if wrong:
            print()
            print("Not exact:")
            print()
            for path, field, got, want in wrong:
                print(f"- `{os.path.basename(path)}` {field}: margin `{got}`, reader `{want}`")
        return
    for path, verdicts in report:
        for field, (right, got, want) in verdicts.items():
            print(f"{'ok ' if right else 'BAD'} {field:8} {os.path.basename(path)[:44]:44} {got!s:.70}"
                  + ("" if right else f"  (reader: {want!s:.70})"))
    for field, (right, total) in tally.items():
        print(f"{field}: {right}/{total} exact ({100 * right / max(total, 1):.0f} %)")


if __name__ == "__main__":
    main()
