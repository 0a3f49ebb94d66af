"""What reading text-mode tool calls costs, against baselines measured in the same run.

* ``read``: ``parse_text_calls`` on each reply of the test corpus (``tests/agent/test_text_calls.py``),
  against ``json.loads`` of one call object of the same size (the least any reader must do);
* ``prose``: auto mode's check of a reply that holds no call (a 2 KB plain answer), against
  ``str.find`` of ``{`` in it;
* ``stream``: ``CallTextFilter`` on a 4 KB answer with code and JSON, fed in 4-character deltas as a
  model streams, against joining the deltas.

A report: it prints microseconds and ratios and exits 0 whatever they are. ``--quick`` for a smoke run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/text_mode.py`
    sys.path.insert(0, str(ROOT))

from agcore.agent.textcalls._text_calls import parse_text_calls  # noqa: E402
from agcore.agent.textcalls._text_stream import CallTextFilter  # noqa: E402
from tests.agent.test_text_calls import CORPUS, TOOLS  # noqa: E402

PROSE = (
    "The function reads the configuration file, merges it with the defaults and returns the result. "
    "It raises a ValueError when a key is unknown, so callers see the mistake early. "
) * 12
ANSWER = (
    PROSE
    + "\n```python\ndef merge(a: dict, b: dict) -> dict:\n    return {**a, **b}\n```\n"
    + 'The API answers {"status": "ok", "items": [1, 2, 3]} on success. '
    + PROSE
)


def per_call_us(fn: Callable[[], object], repeat: int) -> float:
    """Median microseconds per call over five rounds of ``repeat`` calls."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        rounds.append((time.perf_counter() - start) / repeat * 1e6)
    return statistics.median(rounds)


def stream(deltas: list[str]) -> str:
    held = CallTextFilter(TOOLS)
    return "".join(held.feed(d) for d in deltas) + held.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    args = parser.parse_args(argv)
    repeat = 20 if args.quick else 200
    replies = [c[1] for c in CORPUS]
    call = json.dumps({"name": "read_file", "arguments": {"path": "src/app.py"}})
    read = per_call_us(lambda: [parse_text_calls(r, TOOLS) for r in replies], repeat) / len(replies)
    loads = per_call_us(lambda: json.loads(call), repeat * 20)
    prose = per_call_us(lambda: parse_text_calls(PROSE, TOOLS), repeat * 20)
    find = per_call_us(lambda: PROSE.find("{"), repeat * 20)
    deltas = [ANSWER[i : i + 4] for i in range(0, len(ANSWER), 4)]
    assert stream(deltas) == ANSWER  # nothing in it is a call: all of it is shown
    filtered = per_call_us(lambda: stream(deltas), repeat)
    joined = per_call_us(lambda: "".join(deltas), repeat)
    rows = [
        ("read", f"corpus reply ({len(replies)} replies)", read, "json.loads of one call", loads),
        ("prose", f"{len(PROSE)} chars, no call", prose, "str.find('{')", find),
        ("stream", f"{len(ANSWER)} chars in {len(deltas)} deltas", filtered, "''.join(deltas)", joined),
    ]
    print(f"{'section':8} {'what':34} {'µs':>9}   {'baseline':24} {'µs':>9} {'ratio':>8}")
    for name, what, us, base, base_us in rows:
        print(f"{name:8} {what:34} {us:9.1f}   {base:24} {base_us:9.2f} {us / base_us:7.0f}x")
    print(f"stream: {filtered / len(ANSWER) * 1000:.0f} ns per streamed character")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
