"""Lazy package exports (PEP 562), so ``import agcore.agent`` does not load what a run rarely needs.

A package lists its rarely used names with the module defining each, imports them under
``TYPE_CHECKING`` (mypy and IDEs see the real types) and forwards its module ``__getattr__`` and
``__dir__`` here. The first access imports the module and caches the value in the package namespace,
so later accesses are plain attribute lookups.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["lazy_dir", "lazy_getattr"]


def lazy_getattr(package: str, exports: Mapping[str, str], name: str) -> Any:
    """The value of ``package.name``, imported from ``exports[name]`` (a module path) on first use."""
    module = exports.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    setattr(sys.modules[package], name, value)
    return value


def lazy_dir(package: str, exports: Mapping[str, str]) -> list[str]:
    """``dir(package)``: what it has loaded plus the names it would load on demand."""
    return sorted({*vars(sys.modules[package]), *exports})
