"""What the providers read off an HTTP response before its body."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["is_json"]


def is_json(headers: Mapping[str, str]) -> bool:
    """Whether the response is a JSON body: a server (or a gateway) that ignores ``"stream": true``
    answers a streaming request with one, which is then read as the whole reply."""
    return (headers.get("content-type") or "").split(";")[0].strip().lower() == "application/json"
