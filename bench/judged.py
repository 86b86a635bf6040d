#!/usr/bin/env python3
"""Search quality on judged queries: nDCG@10 and recall@50 of one or more margin binaries.

The queries and their judgments are made here, from the text of ../shared/corpus/real as
pdftotext reads it (not from margin), by fixed rules, so that any binary is judged the same:

  - single words (up to 22, those on two pages or more): short words of the corpus's subjects that
    longer words hold too ("rate" in "generate", "age" in "page"): a page holding the word twice
    or more is worth 3, once 2; a page holding it only inside other words 0;
  - inflected forms (15): a form ("distributions") whose other forms are in the corpus too
    ("distribution", "distributed"): a page with the form as typed 3, with another form 1;
  - two words (10): two words often on the same pages: both as words 2, both as words or other
    forms 1;
  - phrases (10): frequent pairs of words in a row, quoted, that the text holds as words: the
    phrase on the page 3;
  - typographic apostrophes (5): words printed with a curly apostrophe ("don’t"), typed with a
    straight one: judged as single words;
  - misspellings (5): long common words with two letters swapped: judged as the word; a binary
    that finds nothing and suggests a query is judged on the hits of its first suggestion (what
    a reader clicks), one that finds nothing is worth 0.

Other forms are told by a few suffix rules of this script's own (s, es, ies, ed, ing), not by
Snowball. nDCG@10 uses gains 2^grade - 1 against the ideal order of every judged page; recall@50
is the share of the pages worth 1 or more among the first 50 hits (of at most 50 such pages).
Also checked: no single-word query of the binary loses a page `pdfgrep -i -w` finds.

Usage: bench/judged.py NAME=BINARY [NAME=BINARY ...] [--markdown]   (indexes the corpus once a
binary, in bench/work/judged-NAME)
"""
import collections
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(os.path.dirname(ROOT), "shared", "corpus", "real")
WORK = os.path.join(ROOT, "bench", "work")
STOP = set(
    "the and for that with this from are was were have has had not but which their there they them then than "
    "its into also can may been more such these those when what where will would could should each other some "
    "only one two all any our out use used using see about over most many much very how who why her his him".split()
)
SINGLE_WORDS = (
    "art mean rate test sum age pair list set map cons car tree data model rule case term loop value "
    "step ratio".split()
)
TYPOGRAPHY = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-", "‐": "-", "\u00ad": ""})


def fold(text):
    """Lowercase, curly quotes straight, no accents, words hyphenated at a line end joined."""
    text = text.translate(TYPOGRAPHY).lower()
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    return re.sub(r"\s+", " ", text)


def words(text):
    return re.findall(r"[^\W_]+", text)


def forms_key(word):
    """A rough family key: the word without one common English suffix."""
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + replacement
    return word


def read_corpus():
    pages = {}  # (file, page) -> (folded text, Counter of words, raw text)
    for name in sorted(os.listdir(CORPUS)):
        if not name.endswith(".pdf"):
            continue
        path = os.path.join(CORPUS, name)
        text = subprocess.run(["pdftotext", "-enc", "UTF-8", path, "-"], capture_output=True, text=True).stdout
        for number, raw in enumerate(text.split("\f"), start=1):
            if raw.strip():
                folded = fold(raw)
                pages[(path, number)] = (folded, collections.Counter(words(folded)), raw)
    return pages


def make_queries(pages):
    """The judged queries, by the rules above: [(kind, query, judge)], judge(page) -> grade."""
    df = collections.Counter()
    for _, counts, _ in pages.values():
        df.update(counts.keys())
    vocabulary = sorted(w for w in df if w.isalpha())
    families = collections.defaultdict(set)
    for w in vocabulary:
        families[forms_key(w)].add(w)
    queries = []

    def single(word):
        return lambda page: 3 if page[1][word] >= 2 else 2 if page[1][word] == 1 else 0

    # Single words: short words of the corpus's subjects that longer words hold too ("rate" in
    # "generate", "age" in "page"), those on two pages or more as words.
    for w in SINGLE_WORDS:
        if df[w] >= 2:
            queries.append(("single word", w, single(w)))
    # Inflected forms: the form typed, its family in the corpus.
    chosen = []
    for key, members in sorted(families.items()):
        members = sorted(m for m in members if df[m] >= 2 and len(m) >= 5 and m not in STOP)
        if len(members) >= 2:
            form = max(members, key=lambda m: (len(m), m))
            chosen.append((sum(df[m] for m in members), form, members))
    for _, form, members in sorted(chosen, key=lambda c: (-c[0], c[1]))[:15]:
        others = [m for m in members if m != form]
        queries.append((
            "inflected form", form,
            lambda page, form=form, others=others: 3 if page[1][form] else 1 if any(page[1][o] for o in others) else 0,
        ))
    # Two words often together.
    common = [w for w in vocabulary if len(w) >= 5 and 5 <= df[w] <= 150 and w not in STOP]
    together = collections.Counter()
    for _, counts, _ in pages.values():
        present = sorted(w for w in common if counts[w])
        for i, a in enumerate(present):
            for b in present[i + 1:]:
                together[(a, b)] += 1
    pairs = [p for p, n in together.most_common() if n >= 3 and forms_key(p[0]) != forms_key(p[1])][:40]
    random.Random(7).shuffle(pairs)
    for a, b in pairs[:10]:
        def both(page, a=a, b=b):
            if page[1][a] and page[1][b]:
                return 2
            near = lambda w: any(page[1][m] for m in families[forms_key(w)])
            return 1 if near(a) and near(b) else 0
        queries.append(("two words", f"{a} {b}", both))
    # Phrases: frequent pairs of words in a row.
    bigrams = collections.Counter()
    for folded, _, _ in pages.values():
        tokens = words(folded)
        for a, b in zip(tokens, tokens[1:]):
            if a.isalpha() and b.isalpha() and len(a) >= 4 and len(b) >= 4 and a not in STOP and b not in STOP:
                bigrams[(a, b)] += 1
    phrases = [p for p, n in bigrams.most_common(60) if n >= 3]
    random.Random(11).shuffle(phrases)
    chosen_phrases = 0
    for a, b in phrases:
        pattern = re.compile(r"(?<![^\W_])" + re.escape(a) + r"\s+" + re.escape(b) + r"(?![^\W_])")
        if chosen_phrases < 10 and any(pattern.search(page[0]) for page in pages.values()):
            queries.append(("phrase", f'"{a} {b}"', lambda page, p=pattern: 3 if p.search(page[0]) else 0))
            chosen_phrases += 1
    # Curly apostrophes, typed straight.
    curly = collections.Counter()
    for _, _, raw in pages.values():
        for token in re.findall(r"[^\W_]+’[^\W_]+", raw):
            curly[token.lower()] += 1
    for token, _ in sorted(curly.items(), key=lambda t: (-t[1], t[0]))[:5]:
        typed = token.replace("’", "'")
        pattern = re.compile(r"(?<![^\W_])" + re.escape(typed) + r"(?![^\W_])")
        queries.append((
            "typographic apostrophe", typed,
            lambda page, p=pattern: (lambda n: 3 if n >= 2 else 2 if n == 1 else 0)(len(p.findall(page[0]))),
        ))
    # Misspellings: two letters of a long common word swapped.
    long_words = sorted((w for w in vocabulary if len(w) >= 8 and df[w] >= 5), key=lambda w: (-df[w], w))[:5]
    for w in long_words:
        middle = len(w) // 2
        wrong = w[:middle] + w[middle + 1] + w[middle] + w[middle + 2:]
        queries.append(("misspelling", wrong, single(w)))
    return queries


def index(name, binary):
    home = os.path.join(WORK, "judged-" + name)
    shutil.rmtree(home, ignore_errors=True)
    env = dict(os.environ, MARGIN_HOME=home)
    files = sorted(os.path.join(CORPUS, n) for n in os.listdir(CORPUS) if n.endswith(".pdf"))
    subprocess.run([binary, "add", "--quiet", "--jobs", "2"] + files, env=env, check=False, capture_output=True)
    books = json.loads(subprocess.run([binary, "list", "--json"], env=env, capture_output=True, text=True).stdout)
    file_of = {b["id"]: b["sources"][0].replace("file://", "") for b in books if b.get("sources")}
    return env, file_of


def ranked(binary, env, file_of, query, limit=50):
    out = subprocess.run(
        [binary, "search", query, "--json", "--suggest", "--limit", str(limit)], env=env, capture_output=True, text=True
    ).stdout
    try:
        answer = json.loads(out)
    except json.JSONDecodeError:
        return []
    hits = answer["hits"] if isinstance(answer, dict) else answer
    if not hits and isinstance(answer, dict) and answer.get("suggestions"):
        return ranked(binary, env, file_of, answer["suggestions"][0], limit)
    return [(file_of.get(h["book"]), h["page"]) for h in hits]


def ndcg(grades_ranked, all_grades, k=10):
    dcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades_ranked[:k]))
    ideal = sorted(all_grades, reverse=True)[:k]
    best = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def pdfgrep_pages(word):
    result = subprocess.run(
        ["pdfgrep", "-r", "-i", "-w", "-n", "--include", "*.pdf", word, CORPUS], capture_output=True, text=True
    )
    found = set()
    for line in result.stdout.splitlines():
        parts = line.split(":", 2)
        if len(parts) >= 2 and parts[1].isdigit():
            found.add((parts[0], int(parts[1])))
    return found


def main():
    markdown = "--markdown" in sys.argv
    binaries = [a.split("=", 1) for a in sys.argv[1:] if "=" in a]
    if not binaries:
        sys.exit(__doc__)
    pages = read_corpus()
    queries = make_queries(pages)
    judged = {q: {key: judge(page) for key, page in pages.items()} for _, q, judge in queries}
    results = {}
    lost = {}
    for name, binary in binaries:
        env, file_of = index(name, binary)
        per_query = []
        for kind, query, _ in queries:
            grades = judged[query]
            hits = ranked(binary, env, file_of, query)
            got = [grades.get(h, 0) for h in hits]
            relevant = {k for k, g in grades.items() if g >= 1}
            recall = len(relevant & set(hits[:50])) / min(len(relevant), 50) if relevant else 1.0
            per_query.append((kind, query, ndcg(got, list(grades.values())), recall))
        results[name] = per_query
        # Pages pdfgrep -i -w finds for a one-word query, all of which margin must find.
        missing = 0
        for kind, query, _ in queries:
            if kind in ("single word", "inflected form"):
                every = set(ranked(binary, env, file_of, query, limit=0))
                missing += len(pdfgrep_pages(query) - every)
        lost[name] = missing
    kinds = list(dict.fromkeys(k for k, _, _ in queries))
    lines = []
    header = "| queries | n | " + " | ".join(f"nDCG@10 {n} | recall@50 {n}" for n, _ in binaries) + " |"
    lines.append(header)
    lines.append("|" + "---|" * (2 + 2 * len(binaries)))
    for kind in kinds + ["all"]:
        row = [kind, str(sum(1 for k, _, _ in queries if kind in ("all", k)))]
        for name, _ in binaries:
            chosen = [r for r in results[name] if kind in ("all", r[0])]
            row.append(f"{sum(r[2] for r in chosen) / len(chosen):.3f}")
            row.append(f"{sum(r[3] for r in chosen) / len(chosen):.3f}")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(
        "Pages `pdfgrep -i -w` finds for the single-word and inflected queries that a binary does not: "
        + ", ".join(f"{n} {lost[n]}" for n, _ in binaries) + "."
    )
    if len(binaries) >= 2:
        first, last = binaries[0][0], binaries[-1][0]
        a = sum(r[2] for r in results[first]) / len(queries)
        b = sum(r[2] for r in results[last]) / len(queries)
        lines.append(f"nDCG@10 {last} / {first}: {b / a:.2f}× ({(b / a - 1) * 100:+.0f} %).")
    lines.append("")
    lines.append("Each query (nDCG@10 per binary):")
    lines.append("")
    lines.append("| kind | query | " + " | ".join(n for n, _ in binaries) + " |")
    lines.append("|" + "---|" * (2 + len(binaries)))
    for i, (kind, query, _) in enumerate(queries):
        lines.append(
            f"| {kind} | `{query}` | " + " | ".join(f"{results[n][i][2]:.2f}" for n, _ in binaries) + " |"
        )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
