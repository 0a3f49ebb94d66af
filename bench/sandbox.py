"""What the command sandbox costs per command: ``run_command("true")`` with and without bubblewrap.

Rows (each a trivial command, ``true``, so what is measured is the machinery around it):

- ``spawn``: ``anyio.open_process(["true"])`` and wait: the floor any runner pays; the baseline.
- ``bwrap alone``: the same, wrapped in the sandbox's bwrap command line (no agcore around it).
- ``run_command, guard-only``: ``Workspace(sandbox="off").run_command("true")``: guard, planning,
  environment scrubbing, spawn, output capture, result text.
- ``run_command, sandboxed``: the same inside bubblewrap (the default where it works).
- ``run_command, sandboxed, network``: the sandbox without a network namespace (``allow_network``).

Calls run in batches, the rows alternating batch by batch so drift hits all alike; each call is timed
alone. The report shows the median of the batch medians (p50), the p95 over all calls, and the
overhead over ``spawn``. The target is run_command's p50 overhead under 20 ms for a trivial command,
sandboxed. It is a report, not a test: it exits 0 whatever the numbers.

    python bench/sandbox.py                       # 10 batches x 30 calls per row
    python bench/sandbox.py --batches 3 --calls 10  # a quick smoke run
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere: `python bench/sandbox.py`
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from agcore.tools._sandbox import BwrapSandbox, probe_bwrap  # noqa: E402
from agcore.tools.workspace import Workspace  # noqa: E402

TARGET_MS = 20.0
Row = Callable[[], Awaitable[object]]


async def _spawn(argv: list[str]) -> None:
    process = await anyio.open_process(argv)
    await process.wait()
    await process.aclose()


def rows(root: Path) -> dict[str, Row]:
    true = shutil.which("true") or "/bin/true"
    found: dict[str, Row] = {"spawn": lambda: _spawn([true])}
    plain = Workspace(root, sandbox="off", confirm_commands=False)
    probe = probe_bwrap()
    if probe.path is not None:
        sandbox = BwrapSandbox(probe.path, probe.user_namespace)
        wrapped = sandbox.wrap([true], workspace=root, cwd=root, allow_network=False)
        found["bwrap alone"] = lambda: _spawn(wrapped)
    found["run_command, guard-only"] = lambda: plain.run_command("true")
    if probe.path is not None:
        boxed = Workspace(root, sandbox="required", confirm_commands=False)
        networked = Workspace(root, sandbox="required", confirm_commands=False, allow_network=True)
        found["run_command, sandboxed"] = lambda: boxed.run_command("true")
        found["run_command, sandboxed, network"] = lambda: networked.run_command("true")
    else:
        print(f"(no sandbox rows: {probe.reason})")
    return found


async def measure(batches: int, calls: int) -> None:
    with tempfile.TemporaryDirectory(prefix="agcore-bench-sandbox-") as directory:
        table = rows(Path(directory))
        for row in table.values():  # warm up: imports, the bwrap probe, page cache
            for _ in range(3):
                await row()
        medians: dict[str, list[float]] = {name: [] for name in table}
        every: dict[str, list[float]] = {name: [] for name in table}
        for _ in range(batches):
            for name, row in table.items():
                times: list[float] = []
                for _ in range(calls):
                    began = time.perf_counter_ns()
                    await row()
                    times.append((time.perf_counter_ns() - began) / 1e6)
                medians[name].append(statistics.median(times))
                every[name].extend(times)
    base = statistics.median(medians["spawn"])
    print(f"{batches} batches x {calls} calls per row; times in ms per command ('true')")
    print(f"{'row':34} {'p50':>8} {'p95':>8} {'over spawn':>11}")
    for name in table:
        p50 = statistics.median(medians[name])
        p95 = statistics.quantiles(every[name], n=20)[-1]
        print(f"{name:34} {p50:8.2f} {p95:8.2f} {p50 - base:+11.2f}")
    if "run_command, sandboxed" in table:
        boxed = statistics.median(medians["run_command, sandboxed"])
        plain = statistics.median(medians["run_command, guard-only"])
        verdict = "under" if boxed - base < TARGET_MS else "OVER"
        print(
            f"\nsandbox cost per command: {boxed - plain:+.2f} ms (sandboxed vs guard-only run_command)\n"
            f"run_command p50 overhead, sandboxed: {boxed - base:.2f} ms over a bare spawn "
            f"({verdict} the {TARGET_MS:g} ms target)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    anyio.run(measure, args.batches, args.calls)


if __name__ == "__main__":
    main()
