"""How often a cut tool output still holds what the call asked for: keyword windows against the
head cut (the registry's default) and head + tail (``agcore.context.cut_middle``).

The output is real: agcore's own source in one text (about 1.4 MB). The calls are real too: for
each of the ``--queries`` function definitions picked evenly through it, a search call
``{"pattern": "def NAME"}`` whose output is the whole text. A cut "finds" the answer when the
definition line survives. The report shows, per budget, the share found by each cut and the time a
keyword cut takes. It is a report, not a test: it exits 0 whatever the numbers.

    python bench/keyword_windows.py
    python bench/keyword_windows.py --queries 20 --budgets 2000 8000
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agcore.context import cut_middle  # noqa: E402
from agcore.tools import call_keywords, keyword_windows  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--budgets", type=int, nargs="+", default=[2000, 4000, 8000, 16000])
    args = parser.parse_args()
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "agcore").rglob("*.py")))
    names = re.findall(r"^\s*(?:async )?def (\w+)\(", text, flags=re.MULTILINE)
    unique = [n for n in dict.fromkeys(names) if names.count(n) == 1]
    step = max(1, len(unique) // args.queries)
    picked = unique[::step][: args.queries]
    print(f"output: {len(text):,} characters, {text.count(chr(10)):,} lines; {len(picked)} queries")
    print(f"{'budget':>8}  {'head':>6}  {'head+tail':>9}  {'keywords':>8}  {'ms per keyword cut':>18}")
    for budget in args.budgets:
        found = {"head": 0, "middle": 0, "keywords": 0}
        times: list[float] = []
        for name in picked:
            line = f"def {name}("
            found["head"] += line in text[:budget]
            found["middle"] += line in cut_middle(text, budget)
            start = time.perf_counter()
            cut = keyword_windows(text, call_keywords({"pattern": f"def {name}"}), budget)
            times.append((time.perf_counter() - start) * 1000)
            found["keywords"] += line in cut
        n = len(picked)
        print(f"{budget:>8,}  {found['head'] / n:>6.0%}  {found['middle'] / n:>9.0%}  "
              f"{found['keywords'] / n:>8.0%}  {statistics.median(times):>18.1f}")


if __name__ == "__main__":
    main()
