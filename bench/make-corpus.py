#!/usr/bin/env python3
"""Writes a corpus of dense-text PDFs with a given number of pages, for the scale benchmark.

Deterministic (seeded): the same arguments give the same files. Pages hold ~50 lines of words
drawn with Zipf frequencies from English function words and ~40,000 made-up words, so the
vocabulary and the postings grow as in real text, plus words planted at known rates:

  quasar            on every 1,000th page  (a rare word)
  dark matter halo  on every 500th page    (a phrase)
  the               on nearly every page   (the commonest word)

Usage: bench/make-corpus.py --pages N --out DIR [--book-pages 500]
"""
import argparse
import itertools
import importlib.util
import os
import random

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("fixtures", os.path.join(ROOT, "fixtures", "make-fixtures.py"))
fixtures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixtures)

FUNCTION_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have "
    "an they you were her all she there would their we him been has when who will more no if out so said "
    "what up its about into than them can only other new some could time these two may then do first any"
).split()
SYLLABLES = "ka lo mi ne ru sa te vo zi pa re do fu gi ha ji ku ma no pe qu ri so tu vi wa xe yo ze".split()


def vocabulary(rng, size):
    words = list(FUNCTION_WORDS)
    seen = set(words) | {"quasar", "dark", "matter", "halo"}
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 5)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--book-pages", type=int, default=500)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary(rng, 40_000)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    # A pool of lines drawn once; each page takes 50 of them and a line of its own.
    pool = []
    for _ in range(30_000):
        line = rng.choices(words, cum_weights=cumulative, k=13)
        pool.append(" ".join(line))
    os.makedirs(args.out, exist_ok=True)
    page = 0
    book = 0
    while page < args.pages:
        book += 1
        count = min(args.book_pages, args.pages - page)
        pages = []
        for _ in range(count):
            page += 1
            lines = rng.sample(pool, 50)
            own = f"section {page} of the corpus, {words[rng.randrange(200, len(words))]} {rng.randrange(10**6)}"
            lines.insert(rng.randrange(50), own)
            if page % 1000 == 0:
                lines[rng.randrange(len(lines))] += " quasar"
            if page % 500 == 0:
                lines[rng.randrange(len(lines))] += " dark matter halo"
            pages.append(lines)
        path = os.path.join(args.out, f"book{book:04d}.pdf")
        fixtures.write_pdf(path, pages, title=f"Generated book {book}", author="bench/make-corpus.py")
    print(f"wrote {book} PDFs, {page} pages, to {args.out}")


if __name__ == "__main__":
    main()
