"""``OverflowToMemory``: what compaction cut from a conversation, summarised into a memory store.

A compaction's ``on_overflow`` callback receives the transcript it summarised away. Seed 004 writes
a summary of the overflow to the agent's long-term memory, so that what the context window could not
hold can still be found later with ``retrieve``. This callback does that: a model (a cheap one is
fine) writes a note of the durable facts, and the note goes into a ``MemoryStore``.

```python
transform = create_context_transform(
    cheap_model, on_overflow=OverflowToMemory(store, cheap_model, metadata={"session": "s1"}))
```

Nothing is lost: when the summariser fails, the transcript itself is stored (marked
``"summarised": False``) and a warning logged. A failing store raises ``MemoryStoreError``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from agcore.llm.errors import LLMError
from agcore.llm.provider import LLMProvider
from agcore.llm.types import LLMRequest
from agcore.memory._protocols import DEFAULT_NAMESPACE, MemoryItem, MemoryStore

__all__ = ["DEFAULT_OVERFLOW_PROMPT", "OverflowToMemory", "SummariserSource"]

_log = logging.getLogger("agcore.memory")

#: The summarising model: a provider, or a function (sync or async, no arguments) returning one.
SummariserSource: TypeAlias = LLMProvider | Callable[[], "LLMProvider | Awaitable[LLMProvider]"]

DEFAULT_OVERFLOW_PROMPT = """\
Below is part of a conversation between a user and an AI agent that is leaving the agent's context \
window. Write the notes the agent should keep in its long-term memory: the user's goals, preferences \
and facts about them, decisions and their reasons, names, paths and numbers that matter, results of \
the work, and what is still open. Leave out pleasantries, tool chatter and anything temporary. Write \
in the language of the conversation, as short bullet points, without a preamble."""

_SYSTEM = "You write faithful, compact memory notes from conversations. Never invent facts."


class OverflowToMemory:
    """An ``on_overflow`` callback: summarise the text with ``summariser`` and add the summary to
    ``store`` (in ``namespace``, with ``metadata`` plus ``kind="conversation_summary"``).

    A transcript longer than ``max_input_chars`` is summarised in parts, one note per part.
    ``items`` lists what this callback stored, newest last.
    """

    def __init__(
        self,
        store: MemoryStore,
        summariser: SummariserSource,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        metadata: Mapping[str, Any] | None = None,
        prompt: str = DEFAULT_OVERFLOW_PROMPT,
        max_tokens: int = 1024,
        max_input_chars: int = 60_000,
    ) -> None:
        if max_tokens <= 0 or max_input_chars <= 0:
            raise ValueError(f"max_tokens and max_input_chars must be positive, not {max_tokens}, "
                             f"{max_input_chars}")
        self.store = store
        self.namespace = namespace
        self.metadata = dict(metadata or {})
        self.prompt = prompt
        self.max_tokens = max_tokens
        self.max_input_chars = max_input_chars
        self.items: list[MemoryItem] = []
        self._source = summariser

    async def __call__(self, text: str) -> None:
        """Summarise ``text`` and store the note(s); an empty text stores nothing."""
        for part in _parts(text.strip(), self.max_input_chars):
            note, summarised = await self._summarise(part)
            item = await self.store.add(
                note, namespace=self.namespace,
                metadata={**self.metadata, "kind": "conversation_summary", "summarised": summarised},
            )
            self.items.append(item)

    async def _summarise(self, transcript: str) -> tuple[str, bool]:
        request = LLMRequest.build(f"{self.prompt}\n\n<transcript>\n{transcript}\n</transcript>",
                                   system=_SYSTEM, max_tokens=self.max_tokens)
        try:
            reply = await (await self._provider()).complete(request)
        except LLMError as exc:
            _log.warning("the overflow summary failed (%s); storing the transcript itself", exc)
            return transcript, False
        note = reply.message.text.strip()
        if not note:
            _log.warning("the overflow summariser answered nothing; storing the transcript itself")
            return transcript, False
        return note, True

    async def _provider(self) -> LLMProvider:
        source = self._source
        if callable(getattr(source, "complete", None)):
            return source  # type: ignore[return-value]  # an LLMProvider, by the duck check
        if not callable(source):
            raise TypeError(f"summariser must be an LLMProvider or a function returning one, not {source!r}")
        chosen = source()
        if inspect.isawaitable(chosen):
            chosen = await chosen
        return chosen


def _parts(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, cut at line ends where there are any."""
    parts: list[str] = []
    while len(text) > size:
        cut = text.rfind("\n", 0, size)
        cut = cut if cut > size // 2 else size
        parts.append(text[:cut].strip())
        text = text[cut:].strip()
    if text:
        parts.append(text)
    return parts
