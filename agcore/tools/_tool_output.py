"""A tool's return value as tool-result content, and the head cut of output over its cap."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from agcore.llm.types import ImageBlock, TextBlock

__all__ = ["ToolOutput", "render_output", "truncate_output"]

ToolOutput = str | list[TextBlock | ImageBlock]

_BLOCKS = (TextBlock, ImageBlock)
# One encoder, built once: json.dumps with options builds a new one per call.
_encode_json = json.JSONEncoder(ensure_ascii=False, default=to_jsonable_python).encode


def render_output(value: Any) -> ToolOutput:
    """A tool's return value as tool-result content: str as is; None -> ""; a TextBlock/ImageBlock or a
    list of them -> blocks; a pydantic model -> its JSON; other data -> JSON (``ensure_ascii=False``),
    falling back to ``str(value)`` for what JSON cannot hold."""
    if isinstance(value, str):
        return str(value)
    if value is None:
        return ""
    if type(value) is int:
        return str(value)
    if isinstance(value, TextBlock | ImageBlock):
        return [value]
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, list | tuple) and value and all(isinstance(v, _BLOCKS) for v in value):
        return list(value)
    try:
        return _encode_json(value)
    except (TypeError, ValueError):
        return str(value)


def truncate_output(output: ToolOutput, limit: int | None) -> ToolOutput:
    """Cut text past ``limit`` characters, ending with ``[… truncated N of M characters]``.

    For block lists the budget spans all text blocks in order; images are kept.
    """
    if limit is None:
        return output
    if isinstance(output, str):
        if len(output) <= limit:
            return output
        return output[:limit] + _marker(len(output) - limit, len(output))
    total = sum(len(b.text) for b in output if isinstance(b, TextBlock))
    if total <= limit:
        return output
    budget = limit
    kept: list[TextBlock | ImageBlock] = []
    for block in output:
        if isinstance(block, TextBlock):
            if budget > 0:
                kept.append(block if len(block.text) <= budget else TextBlock(text=block.text[:budget]))
            budget -= len(block.text)
        else:
            kept.append(block)
    kept.append(TextBlock(text=_marker(total - limit, total).lstrip("\n")))
    return kept


def _marker(cut: int, total: int) -> str:
    return f"\n[… truncated {cut:,} of {total:,} characters]"
