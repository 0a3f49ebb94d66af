"""The repo map's file cache on disk: each file's symbols and identifier counts under its stamp, so a
new process parses only the files that changed since the last one wrote the cache.

JSON, written whole to a temporary file and renamed over the old one (a reader never sees half a
cache); a cache that cannot be read (missing, corrupt, another version) is ignored, never an error:
it only saves time.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from agcore.code._files import FileStamp
from agcore.code._symbols import FileSymbols, Symbol

__all__ = ["load_map_cache", "save_map_cache"]

_VERSION = 1
Entries = dict[str, tuple[FileStamp, FileSymbols]]


def load_map_cache(path: Path) -> Entries:
    """The cached entries of ``path``, or none when it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != _VERSION:
            return {}
        return {name: _entry(name, raw) for name, raw in data["files"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def save_map_cache(path: Path, entries: Entries) -> None:
    """Write ``entries`` to ``path`` atomically (a failure to write is ignored: the cache is optional)."""
    files = {
        name: [stamp.mtime_ns, stamp.size,
               [[s.name, s.qualified, s.kind, s.signature, s.start_line, s.end_line] for s in info.symbols],
               dict(info.identifiers)]
        for name, (stamp, info) in entries.items()
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, delete=False,
                                         prefix=path.name, suffix=".tmp") as out:
            json.dump({"version": _VERSION, "files": files}, out, separators=(",", ":"))
        os.replace(out.name, path)
    except OSError:
        return


def _entry(name: str, raw: list[Any]) -> tuple[FileStamp, FileSymbols]:
    mtime, size, symbols, identifiers = raw
    return FileStamp(int(mtime), int(size)), FileSymbols(
        name,
        tuple(Symbol(s[0], s[1], s[2], s[3], name, int(s[4]), int(s[5])) for s in symbols),
        Counter({str(k): int(v) for k, v in identifiers.items()}),
    )
