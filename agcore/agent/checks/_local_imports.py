"""Which workspace modules a Python file imports: what a failing test's note names besides the test.

A failing assert points at the test file (``test_calc.py line 5``), never at the code under test, and
a 1.5B model told "the output points at test_calc.py" edited the test, every round. Naming the local
modules the test imports (``it imports calc.py``) points at where the fix usually is.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["local_imports"]

_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))", re.MULTILINE)
_READ_BYTES = 64_000


def local_imports(path: Path, root: Path) -> list[str]:
    """The workspace files (relative to ``root``) that the Python file ``path`` imports, in order."""
    if path.suffix != ".py":
        return []
    try:
        text = path.read_bytes()[:_READ_BYTES].decode("utf-8", errors="replace")
    except OSError:
        return []
    found: dict[str, None] = {}
    for match in _IMPORT.finditer(text):
        names = [match.group(1)] if match.group(1) else [n.strip() for n in match.group(2).split(",")]
        for name in names:
            module = _module_file(name, path.parent, root)
            if module is not None and module != path:
                found.setdefault(module.relative_to(root).as_posix(), None)
    return list(found)


def _module_file(name: str, here: Path, root: Path) -> Path | None:
    parts = name.lstrip(".").split(".")
    if not all(parts):
        return None
    for base in (here, root) if name.startswith(".") or here != root else (root,):
        stem = base.joinpath(*parts)
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            try:
                if candidate.is_file() and candidate.resolve().is_relative_to(root.resolve()):
                    return candidate
            except (OSError, ValueError):
                continue
    return None
