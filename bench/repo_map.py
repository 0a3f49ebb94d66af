"""How long the repo map takes on a 1,000-file repository: cold, warm, and after one edit.

"New process, disk cache" is a fresh ``RepoMap`` whose ``cache_path`` an earlier one wrote: it
loads the cache, scans, ranks and renders, parsing nothing. The cold build includes writing that
cache. The repository is 1,000 real Python files copied from this virtualenv's site-packages (pydantic,
httpx, rich, ... in sorted order) into a temporary directory, so the files are third-party code of
ordinary shape, not generated stubs. Times are the median of a few runs; the baseline is the bare
directory scan (os.walk + stat of every file) that each build starts with.

    python bench/repo_map.py [--files 1000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from agcore.code import RepoMap, read_symbols
from agcore.code._files import scan_sources
from agcore.context import estimate_tokens


def copy_python_files(target: Path, count: int) -> int:
    """Copy the first ``count`` .py files of site-packages (sorted paths, agcore itself left out)."""
    site = Path(sysconfig.get_paths()["purelib"])
    copied = 0
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames.sort()
        dirnames[:] = [d for d in dirnames if d not in {"agcore", "__pycache__"}]
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            source = Path(dirpath) / name
            if source.stat().st_size > 1_000_000:
                continue
            destination = target / source.relative_to(site)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, destination)
            copied += 1
            if copied == count:
                return copied
    return copied


def timed(work: object) -> float:
    started = time.perf_counter()
    work()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        copied = copy_python_files(root, args.files)
        lines = sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))
        scan = statistics.median(timed(lambda: scan_sources(root, (".py",))) for _ in range(args.runs))
        cold: list[float] = []
        warm: list[float] = []
        edited: list[float] = []
        from_disk: list[float] = []
        text = ""
        cache = Path(tmp) / ".cache" / "repo-map.json"
        for _ in range(args.runs):
            cache.unlink(missing_ok=True)
            repo_map = RepoMap(root, max_tokens=1024, cache_path=cache)
            cold.append(timed(repo_map.build))
            warm.append(timed(repo_map.build))
            # What a new process pays when the previous one left its cache (nothing changed since).
            from_disk.append(timed(lambda: RepoMap(root, max_tokens=1024, cache_path=cache).build()))
            changed = next(root.rglob("*.py"))
            added = "\n\ndef bench_added_function(x: int) -> int:\n    return x\n"
            changed.write_text(changed.read_text() + added)
            edited.append(timed(repo_map.build))
            text = repo_map.text
        symbols = sum(len(read_symbols(p.relative_to(root).as_posix(), p.read_bytes()).symbols)
                      for p in root.rglob("*.py"))
        print(f"repository: {copied} Python files, {lines:,} lines, {symbols:,} definitions "
              f"(Python {sys.version.split()[0]})")
        print(f"baseline, directory scan:   {scan * 1000:8.1f} ms")
        for label, times in (("cold build (parse + rank)", cold), ("warm build (nothing changed)", warm),
                             ("new process, disk cache", from_disk), ("after one file changed", edited)):
            median = statistics.median(times)
            print(f"{label:28s}{median * 1000:8.1f} ms   {median / scan:6.1f}x the scan")
        print(f"cold / warm: {statistics.median(cold) / statistics.median(warm):.0f}x")
        print(f"map: {estimate_tokens(text)} tokens (budget 1024), {text.count(chr(10)) + 1} lines; "
              "its head:")
        print("\n".join(text.splitlines()[:12]))


if __name__ == "__main__":
    main()
