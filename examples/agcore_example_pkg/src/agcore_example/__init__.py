"""An example package built on agcore: ``DocsAgent`` (an ``Agent`` subclass) and two hook plugins,
``ProtectedPaths`` (a policy, published through the ``agcore`` entry point) and ``ToolTally`` (an
observer)."""

from __future__ import annotations

from agcore_example.agent import DocsAgent
from agcore_example.plugins import DEFAULT_PROTECTED, ProtectedPaths, ToolTally, protected_paths

__all__ = ["DEFAULT_PROTECTED", "DocsAgent", "ProtectedPaths", "ToolTally", "protected_paths"]
