"""Several runs of the suite side by side: one column per run (unchecked and checked, constraints off
and on, a peer framework), one row per task, then the totals.

    python -m tests.e2e_local.compare "off=.e2e-off/results.json" "on, checked=.e2e-on-ck/results.json"

Each cell says what happened: ``yes`` (achieved; ``yes, said failed`` when agcore ended the task
failed though the work is there), ``no`` (said failed), ``FALSE`` (said done, work not there: a false
success), ``timeout``; the model calls follow in brackets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["comparison_table", "main"]


def _cell(row: dict[str, Any]) -> str:
    if row["achieved"]:
        word = "yes" if row["claimed"] else "yes, said failed"
    elif row.get("timed_out"):
        word = "timeout"
    else:
        word = "FALSE" if row["false_success"] else "no"
    calls = row.get("model_calls")
    return f"{word} ({'?' if calls is None else calls})"


def comparison_table(runs: list[tuple[str, list[dict[str, Any]]]]) -> str:
    """The markdown table for ``runs`` (label, the ``results`` of a results.json)."""
    tasks: list[str] = []
    for _, rows in runs:
        tasks += [r["task"] for r in rows if r["task"] not in tasks]
    lines = ["| task | " + " | ".join(label for label, _ in runs) + " |",
             "|---|" + "---|" * len(runs)]
    for task in tasks:
        cells = []
        for _, rows in runs:
            row = next((r for r in rows if r["task"] == task), None)
            cells.append("-" if row is None else _cell(row))
        lines.append(f"| {task} | " + " | ".join(cells) + " |")

    def total(label: str, value: Any) -> None:
        lines.append(f"| **{label}** | " + " | ".join(str(value(rows)) for _, rows in runs) + " |")

    total("achieved", lambda rows: f"{sum(r['achieved'] for r in rows)}/{len(rows)}")
    total("false successes", lambda rows: sum(bool(r["false_success"]) for r in rows))
    total("model calls", lambda rows: sum(r.get("model_calls") or 0 for r in rows))
    total("wall time", lambda rows: f"{sum(r['seconds'] for r in rows) / 60:.1f} min")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    runs: list[tuple[str, list[dict[str, Any]]]] = []
    for spec in argv:
        label, _, path = spec.rpartition("=")
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        runs.append((label or path, data["results"]))
    sys.stdout.write(comparison_table(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
