"""agcore: a protocol-first agent-runtime kernel.

The LLM layer lives in ``agcore.llm``; test doubles for downstream users in ``agcore.testing``.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
