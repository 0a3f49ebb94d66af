"""Shared helpers of the LangGraph backend's tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agcore.agent import AgentMessage


def comparable(messages: Sequence[AgentMessage]) -> list[dict[str, Any]]:
    """Messages as JSON data without what each backend makes anew (ids and timestamps)."""
    return [m.model_dump(mode="json", exclude={"id", "created_at"}) for m in messages]
