"""What the race-free file tools cost per call: ``read_file`` and ``write_file`` on a small file.

Rows, each on a file three directories deep (``a/b/c/file.txt``, 2 KB):

- ``guard + open by name``: ``PathGuard.resolve`` then a plain ``open(path).read()``: what a
  check-then-use tool pays (racy); the baseline for reads.
- ``read_file``: ``Workspace.read_file``: the guard, then the descriptor walk from the root
  (``O_NOFOLLOW`` per component), ``fstat``, the read and the numbered-lines rendering.
- ``guard + mkstemp/replace by name``: the guard, then ``tempfile.mkstemp`` + write + fsync +
  ``os.replace`` by path name (racy); the baseline for writes.
- ``write_file``: ``Workspace.write_file``: the guard, the walk, the temp file created with
  ``O_EXCL|O_NOFOLLOW`` in the parent's descriptor, fsync, ``renameat``.

Calls run in batches, the rows alternating batch by batch; the report shows the median of the batch
medians per call (p50), the p95 over all calls, and the ratio to the row's baseline. A report, not a
test: it exits 0 whatever the numbers.

    python bench/file_tools.py                       # 10 batches x 200 calls per row
    python bench/file_tools.py --batches 3 --calls 50  # a quick smoke run
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/file_tools.py`
    sys.path.insert(0, str(ROOT))

from agcore.tools.workspace import Workspace  # noqa: E402

RELATIVE = "a/b/c/file.txt"
CONTENT = "".join(f"line {i}: some text of a source file\n" for i in range(56))  # ~2 KB


def _racy_read(ws: Workspace) -> None:
    real = ws.path_guard.resolve(RELATIVE)
    with open(real, "rb") as handle:
        handle.read()


def _racy_write(ws: Workspace) -> None:
    real = ws.path_guard.resolve(RELATIVE, for_write=True)
    fd, temp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(CONTENT.encode())
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, real)


def rows(ws: Workspace) -> dict[str, Callable[[], object]]:
    return {
        "guard + open by name": lambda: _racy_read(ws),
        "read_file": lambda: ws.read_file(RELATIVE),
        "guard + mkstemp/replace by name": lambda: _racy_write(ws),
        "write_file": lambda: ws.write_file(RELATIVE, CONTENT),
    }


BASELINE = {"read_file": "guard + open by name", "write_file": "guard + mkstemp/replace by name"}


def measure(batches: int, calls: int) -> dict[str, list[list[float]]]:
    with tempfile.TemporaryDirectory(prefix="agcore-bench-files-") as scratch:
        root = Path(scratch)
        (root / "a" / "b" / "c").mkdir(parents=True)
        (root / RELATIVE).write_text(CONTENT)
        ws = Workspace(root, sandbox="off", confirm_writes=False)
        table = rows(ws)
        timings: dict[str, list[list[float]]] = {name: [] for name in table}
        for _ in range(batches):
            for name, call in table.items():
                batch = []
                for _ in range(calls):
                    start = time.perf_counter()
                    call()
                    batch.append(time.perf_counter() - start)
                timings[name].append(batch)
        return timings


def report(timings: dict[str, list[list[float]]]) -> str:
    p50s = {
        name: statistics.median(statistics.median(b) for b in batches) for name, batches in timings.items()
    }
    lines = [f"{'row':<34}{'p50 µs':>10}{'p95 µs':>10}{'vs baseline':>14}"]
    for name, batches in timings.items():
        every = sorted(t for batch in batches for t in batch)
        p95 = every[int(0.95 * (len(every) - 1))]
        base = BASELINE.get(name)
        ratio = f"x{p50s[name] / p50s[base]:.2f}" if base else "(baseline)"
        lines.append(f"{name:<34}{p50s[name] * 1e6:>10.1f}{p95 * 1e6:>10.1f}{ratio:>14}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(report(measure(args.batches, args.calls)))


if __name__ == "__main__":
    main()
