"""What reading a model's plan and verifying a step cost: ``JsonPlanParser`` on the plan corpus, and
``DefaultStepVerifier`` on a step's turn.

Rows:

- ``json.loads + Plan.from_dict``: the clean answers of ``tests/agent/plan_corpus`` (valid JSON as
  written) loaded strictly: what a parser that takes only tidy input pays; the baseline.
- ``JsonPlanParser, clean answers``: the same answers through the tolerant parser.
- ``JsonPlanParser, whole corpus``: every answer of the corpus (fenced, prose, cut off, looping,
  Chinese, the ones it refuses), per answer.
- ``DefaultStepVerifier.check``: one step's turn (a tool call, its result, an answer), per check.

Each row runs in batches, alternating; the report shows the median of the batch medians per item (p50),
the p95 over all items, and the ratio to the baseline. A report, not a test: it exits 0 whatever the
numbers.

    python bench/plan_parser.py                        # 10 batches
    python bench/plan_parser.py --batches 3            # a quick smoke run
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/plan_parser.py`
    sys.path.insert(0, str(ROOT))

from agcore.agent import (  # noqa: E402
    AssistantReply,
    DefaultStepVerifier,
    JsonPlanParser,
    Plan,
    PlanParseError,
    ToolResults,
    TurnResult,
)
from agcore.llm import TextBlock, ToolResultBlock, ToolUseBlock  # noqa: E402
from agcore.llm.types import AssistantMessage  # noqa: E402

CORPUS = ROOT / "tests" / "agent" / "plan_corpus"


def _answers() -> tuple[list[str], list[str]]:
    everything = [case.read_text(encoding="utf-8") for case in sorted(CORPUS.glob("*.txt"))]
    clean = []
    for text in everything:
        try:
            Plan.from_dict(json.loads(text), goal="g")
        except (ValueError, PlanParseError):
            continue
        clean.append(text)
    return clean, everything


def _turn() -> TurnResult:
    call = ToolUseBlock(id="call_1", name="read_file", input={"path": "notes.txt"})
    return TurnResult(text="The notes list three open questions about the release date.", messages=[
        AssistantReply(message=AssistantMessage(content=[call])),
        ToolResults(results=[ToolResultBlock(tool_use_id="call_1", content="1. When?\n2. Who?\n3. How?")]),
        AssistantReply(message=AssistantMessage(content=[TextBlock(
            text="The notes list three open questions about the release date.")])),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=10)
    args = parser.parse_args()
    clean, everything = _answers()
    plans = JsonPlanParser()
    verifier = DefaultStepVerifier()
    turn = _turn()
    step = Plan.from_dict([{"description": "Read notes.txt and list its questions",
                            "tool_hints": ["read_file"]}]).steps[0]

    def strict(text: str) -> None:
        Plan.from_dict(json.loads(text), goal="g")

    def tolerant(text: str) -> None:
        with contextlib.suppress(PlanParseError):
            plans.parse_text(text, "g")

    def verify(_: str) -> None:
        verifier.check(step, turn, prompt="Now carry out step 1 of 1: Read notes.txt", tools=("read_file",))

    rows: list[tuple[str, Callable[[str], None], list[str]]] = [
        ("json.loads + Plan.from_dict", strict, clean),
        ("JsonPlanParser, clean answers", tolerant, clean),
        ("JsonPlanParser, whole corpus", tolerant, everything),
        ("DefaultStepVerifier.check", verify, ["turn"] * 50),
    ]
    medians: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    every: dict[str, list[float]] = {name: [] for name, _, _ in rows}
    for _ in range(args.batches):
        for name, run, items in rows:
            times = []
            for item in items:
                start = time.perf_counter()
                run(item)
                times.append(time.perf_counter() - start)
            medians[name].append(statistics.median(times))
            every[name].extend(times)
    base = statistics.median(medians[rows[0][0]])
    print(f"plan corpus: {len(everything)} answers, {len(clean)} of them valid JSON as written; "
          f"{args.batches} batches")
    print(f"{'row':34} {'p50 µs':>9} {'p95 µs':>9} {'x baseline':>11}")
    for name, _, _ in rows:
        p50 = statistics.median(medians[name])
        p95 = statistics.quantiles(every[name], n=20)[-1]
        print(f"{name:34} {p50 * 1e6:9.1f} {p95 * 1e6:9.1f} {p50 / base:11.2f}")


if __name__ == "__main__":
    main()
