"""How well ``find_runaway`` tells a reply that ran away from a normal long reply cut at max_tokens.

Normal replies: real text cut where a token limit would cut it. Every Python, Markdown, YAML, JSON,
TOML and text file of agcore and of the packages installed in the environment (code, docs, data),
plus the model answers of tests/agent/plan_corpus, each cut at ``--cuts`` random points between
500 and 16,000 characters (about 4k tokens), the cut falling anywhere: mid-word, mid-line. A
detection there is a false positive.

Runaway replies: a normal prefix followed by one unit repeated until the cut, units as small models
write them: one character (``[``, ``{``, a newline, a space), a short token (``"0, "``, ``"}]"``),
a line of code, a sentence, a Chinese sentence, a paragraph of several lines. A miss there is a
false negative.

It also times the check per reply. It is a report, not a test: it exits 0 whatever the numbers.

    python bench/runaway.py
    python bench/runaway.py --cuts 3 --limit 20000
"""

from __future__ import annotations

import argparse
import random
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agcore.agent import find_runaway  # noqa: E402

SUFFIXES = {".py", ".md", ".rst", ".txt", ".yaml", ".yml", ".json", ".toml", ".cfg", ".ini"}
UNITS = [
    "[", "{", "\n", " ", "0, ", "}]", "ha", "```\n",
    "    return None\n",
    "The function returns the sum of its arguments. ",
    "这个函数返回参数之和。",
    "- item\n",
    "def f(x):\n    return x + 1\n\n",
    "I will now read the file.\n\n```json\n{\"tool\": \"read_file\", \"args\": {\"path\": \"a.py\"}}\n```\n",
    ("The repository has three layers. The lowest is the LLM layer, which speaks to vendors. "
     "Above it are tools, memory and context. The agent layer runs the loop.\n\n"),
]


def corpus_files(limit: int) -> list[Path]:
    roots = [ROOT / "agcore", ROOT / "docs", ROOT / "tests", ROOT / "examples",
             Path(sysconfig.get_paths()["purelib"])]
    files = [p for root in roots if root.is_dir() for p in root.rglob("*")
             if p.suffix in SUFFIXES and p.is_file()]
    random.Random(7).shuffle(files)
    return files[:limit]


def normal_replies(files: list[Path], cuts: int) -> list[tuple[str, str]]:
    chooser = random.Random(11)
    replies: list[tuple[str, str]] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if len(text) < 600:
            continue
        for _ in range(cuts):
            end = chooser.randint(500, min(len(text), 16_000))
            replies.append((str(path), text[:end]))
    for answer in sorted((ROOT / "tests" / "agent" / "plan_corpus").glob("*.txt")):
        replies.append((str(answer), answer.read_text(encoding="utf-8")))
    return replies


def runaway_replies(prefixes: list[str]) -> list[tuple[str, str]]:
    chooser = random.Random(13)
    replies = []
    for unit in UNITS:
        for prefix in prefixes:
            length = chooser.randint(300, 8_000)  # how far the repetition got before the cut
            repeated = (unit * (length // len(unit) + 2))[:length]
            replies.append((unit, prefix + repeated))
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cuts", type=int, default=2, help="cut points per file")
    parser.add_argument("--limit", type=int, default=12_000, help="files read at most")
    args = parser.parse_args()
    normal = normal_replies(corpus_files(args.limit), args.cuts)
    started = time.perf_counter()
    flagged = [(source, text) for source, text in normal if find_runaway(text) is not None]
    normal_time = time.perf_counter() - started
    prefixes = [text[:2_000] for _, text in random.Random(5).sample(normal, 40)]
    runaway = runaway_replies(prefixes)
    missed = Counter(unit for unit, text in runaway if find_runaway(text) is None)
    print(f"normal replies: {len(normal)} (cut at 500-16,000 characters); flagged: {len(flagged)} "
          f"= {100 * len(flagged) / len(normal):.3f}% false positives")
    for source, text in flagged[:15]:
        found = find_runaway(text)
        assert found is not None
        print(f"  {source}: {found.describe()}")
    print(f"runaway replies: {len(runaway)} ({len(UNITS)} units x {len(prefixes)} prefixes); missed: "
          f"{sum(missed.values())} = {100 * sum(missed.values()) / len(runaway):.2f}%")
    for unit, count in missed.most_common():
        print(f"  missed {count} x {unit[:40]!r}")
    print(f"time per normal reply: {1e6 * normal_time / len(normal):.0f} us (mean)")


if __name__ == "__main__":
    main()
