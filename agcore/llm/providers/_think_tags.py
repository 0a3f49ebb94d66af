"""``<think>…</think>`` at the start of a reply's text is the model's reasoning, not its answer.

Reasoning models served by OpenAI-compatible servers that do not split reasoning out (llama.cpp
with ``--reasoning-format none``, some vLLM and LM Studio setups, older Ollama builds) send it in
``content``, wrapped in ``<think>`` tags. Left there it is shown as the answer, sent back as the
answer, and read by text-mode call parsing. ``split_leading_think`` takes the leading blocks out of a
whole reply; ``ThinkTagSplitter`` does the same for a stream, whose tags may be cut anywhere between
chunks. Only blocks that open the reply count (whitespace before them aside): a ``<think>`` later in
an answer is text the model meant to write. An unclosed block (the reply cut off while thinking) is
all reasoning.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["Piece", "ThinkTagSplitter", "split_leading_think"]

OPEN = "<think>"
CLOSE = "</think>"

Piece = tuple[Literal["thinking", "text"], str]


def split_leading_think(text: str) -> tuple[str, str]:
    """``(thinking, answer)``: the leading ``<think>`` blocks of ``text`` and what follows them."""
    splitter = ThinkTagSplitter()
    pieces = [*splitter.feed(text), *splitter.flush()]
    thinking = "".join(part for kind, part in pieces if kind == "thinking")
    answer = "".join(part for kind, part in pieces if kind == "text")
    return thinking.rstrip(), answer


class ThinkTagSplitter:
    """Splits streamed text into thinking and answer pieces. Text that might still become a tag is
    held back until the next piece (or ``flush``) decides, so no tag is ever shown half."""

    def __init__(self) -> None:
        self._state = "start"  # then "thinking" inside a block, "text" once the answer began
        self._held = ""  # text not yet decided: a possible tag, or leading whitespace
        self._saw_block = False
        self._block_begun = False  # the current block has shown text (its leading line breaks dropped)

    def feed(self, text: str) -> list[Piece]:
        if self._state == "text":  # the common case once the answer has begun
            return [("text", text)] if text else []
        self._held += text
        pieces: list[Piece] = []
        while self._held and self._state != "text":
            if not self._advance(pieces):
                break
        if self._state == "text" and self._held:
            pieces.append(("text", self._held))
            self._held = ""
        return pieces

    def flush(self) -> list[Piece]:
        """The end of the reply: whatever is held back is what it looked like."""
        held, self._held = self._held, ""
        if not held:
            return []
        return [("thinking" if self._state == "thinking" else "text", held)]

    def _advance(self, pieces: list[Piece]) -> bool:
        """One step on the held text; False when more text is needed to decide."""
        if self._state == "start":
            stripped = self._held.lstrip()
            if stripped.startswith(OPEN):
                self._held = stripped[len(OPEN) :]
                self._state = "thinking"
                self._block_begun = False
                return True
            if not stripped or OPEN.startswith(stripped):
                return False  # only whitespace, or the start of a tag, so far
            self._state = "text"  # the answer begins
            if self._saw_block:  # the line breaks after </think> only separated it from the answer
                self._held = stripped
            return True
        if not self._block_begun:
            self._held = self._held.lstrip()
            if not self._held:
                return False
            self._block_begun = True
        end = self._held.find(CLOSE)
        if end >= 0:
            if end:
                pieces.append(("thinking", self._held[:end]))
            self._held = self._held[end + len(CLOSE) :]
            self._saw_block = True
            self._state = "start"  # another block may follow; else the answer does
            return True
        keep = _partial_tag_length(self._held, CLOSE)
        ready = self._held[: len(self._held) - keep]
        if ready:
            pieces.append(("thinking", ready))
        self._held = self._held[len(self._held) - keep :]
        return False


def _partial_tag_length(text: str, tag: str) -> int:
    """How many characters at the end of ``text`` could be the start of ``tag``."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0
