"""``create_context_transform``: micro-compaction before every call, compaction when needed.

The agent loop converts the session's whole history before every model call and passes it through
the session's ``transform``; what the transform returns is sent, never stored. So the transform
remembers the summary it last wrote and the history prefix it stands for: while the history still
starts with that prefix (it only grows at the end), the summary is reused without a model call, and
a new compaction folds the old summary in and covers only what came since. Use one transform per
session; shared between sessions it still gives correct requests, but re-summarises on every switch.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from agcore.context._compaction import (
    AnyMessage,
    cap_tool_results,
    chunk_budget,
    join_summary,
    plan_cut,
    split_head_summary,
)
from agcore.context._micro import MIN_MAX_CHARS, truncate_old_tool_results
from agcore.context._summary import (
    DEFAULT_SUMMARY_PROMPT,
    OverflowCallback,
    call_overflow,
    render_transcript,
    summarise,
    summary_block,
)
from agcore.context._tokens import estimate_one_message_tokens
from agcore.llm.models import get_model_info
from agcore.llm.provider import LLMProvider
from agcore.llm.types import Message

__all__ = ["ContextCompactor", "MicroCompaction", "SummarizerSource", "create_context_transform"]

#: The summarising model: a provider, or a function (sync or async, no arguments) returning one.
SummarizerSource: TypeAlias = LLMProvider | Callable[[], "LLMProvider | Awaitable[LLMProvider]"]


@dataclass(frozen=True, slots=True)
class MicroCompaction:
    """Settings of ``truncate_old_tool_results``: results older than the last ``keep_last`` are cut
    to ``max_chars`` characters."""

    keep_last: int = 6
    max_chars: int = 2000

    def __post_init__(self) -> None:
        if self.keep_last < 0 or self.max_chars < MIN_MAX_CHARS:
            raise ValueError(f"MicroCompaction needs keep_last >= 0 and max_chars >= {MIN_MAX_CHARS}, "
                             f"not {self.keep_last} and {self.max_chars}")


@dataclass(slots=True)
class _Compacted:
    """The last compaction: ``prefix`` (raw messages) became ``head`` + a summary of the rest."""

    prefix: list[AnyMessage]
    head: list[AnyMessage]
    head_count: int
    summary: str

    def applies_to(self, messages: Sequence[AnyMessage]) -> bool:
        n = len(self.prefix)
        return len(messages) > n and list(messages[:n]) == self.prefix


class ContextCompactor:
    """The transform ``create_context_transform`` returns; call it with a history."""

    def __init__(
        self,
        resolve_provider: SummarizerSource,
        max_context_tokens: int | None = None,
        threshold_ratio: float = 0.8,
        *,
        target_ratio: float = 0.5,
        micro: MicroCompaction | None = None,
        keep_head: int = 1,
        keep_tail: int = 6,
        summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
        summary_max_tokens: int = 2048,
        summary_input_tokens: int | None = None,
        on_overflow: OverflowCallback | None = None,
        model: str | None = None,
    ) -> None:
        if not 0 < target_ratio <= threshold_ratio <= 1:
            raise ValueError(f"need 0 < target_ratio <= threshold_ratio <= 1, got {target_ratio} and "
                             f"{threshold_ratio}")
        if keep_head < 0 or keep_tail < 0:
            raise ValueError(f"keep_head and keep_tail must be 0 or more, not {keep_head}, {keep_tail}")
        self._source = resolve_provider
        self.threshold_ratio = threshold_ratio
        self.target_ratio = target_ratio
        self.micro = micro
        self.keep_head = keep_head
        self.keep_tail = keep_tail
        self.summary_prompt = summary_prompt
        self.summary_max_tokens = summary_max_tokens
        self.summary_input_tokens = summary_input_tokens
        self.on_overflow = on_overflow
        self.model = model
        self.max_context_tokens = max_context_tokens
        if max_context_tokens is None and model is not None:
            self.max_context_tokens = _window_of(model)
        if self.max_context_tokens is not None and self.max_context_tokens <= 0:
            raise ValueError(f"max_context_tokens must be positive, not {self.max_context_tokens}")
        #: How many summaries this transform has written (each is one or more summariser calls).
        self.compactions = 0
        self._last: _Compacted | None = None

    async def _provider(self) -> LLMProvider:
        source = self._source
        if callable(getattr(source, "complete", None)):
            return source  # type: ignore[return-value]  # an LLMProvider, by the duck check
        if not callable(source):
            raise TypeError(f"resolve_provider must be an LLMProvider or a function returning one, "
                            f"not {source!r}")
        chosen = source()
        if inspect.isawaitable(chosen):
            chosen = await chosen
        if not callable(getattr(chosen, "complete", None)):
            raise TypeError(f"resolve_provider returned {chosen!r}, not an LLMProvider: make it return "
                            "the provider that writes summaries")
        return chosen

    async def window(self) -> int:
        """The context window compaction works against (from the registry when not given)."""
        if self.max_context_tokens is None:
            self.max_context_tokens = _window_of((await self._provider()).model_id)
        return self.max_context_tokens

    async def __call__(self, messages: list[Message]) -> list[Message]:
        window = await self.window()
        raw: list[AnyMessage] = list(messages)
        work = raw
        if self.micro is not None:
            work = truncate_old_tool_results(raw, keep_last=self.micro.keep_last,
                                             max_chars=self.micro.max_chars)
        budget = int(window * self.threshold_ratio)
        target = int(window * self.target_ratio)
        last = self._last if self._last is not None and self._last.applies_to(raw) else None
        candidate = self._assemble(last, work)
        if _total(candidate) <= budget:
            return candidate
        work = cap_tool_results(work, max(1, target // 4))
        candidate = self._assemble(last, work)
        if _total(candidate) <= budget:
            return candidate
        head_tokens = _total(last.head if last else work[: self.keep_head])
        plan = plan_cut(
            work, keep_head=last.head_count if last else self.keep_head, keep_tail=self.keep_tail,
            tail_budget=target - head_tokens - self.summary_max_tokens - 16,
            earliest_tail=len(last.prefix) + 1 if last else 0,
        )
        if plan is None:
            return candidate  # nothing can be cut without parting a tool call from its result
        previous: str | None
        if last is not None:
            head, previous, start = last.head, last.summary, len(last.prefix)
        else:
            head, previous = split_head_summary(work[: plan.head])
            start = plan.head
        middle = work[start : plan.tail]
        text = await summarise(middle, provider=await self._provider(), previous=previous,
                               prompt=self.summary_prompt, max_tokens=self.summary_max_tokens,
                               chunk_tokens=self.summary_input_tokens
                               or chunk_budget(budget, self.summary_max_tokens))
        self.compactions += 1
        self._last = _Compacted(prefix=raw[: plan.tail], head=head, head_count=plan.head, summary=text)
        await call_overflow(self.on_overflow, render_transcript(middle))
        return join_summary(head, summary_block(text), work[plan.tail :])

    def _assemble(self, last: _Compacted | None, work: list[AnyMessage]) -> list[AnyMessage]:
        if last is None:
            return work
        return join_summary(last.head, summary_block(last.summary), work[len(last.prefix) :])


def create_context_transform(
    resolve_provider: SummarizerSource,
    max_context_tokens: int | None = None,
    threshold_ratio: float = 0.8,
    *,
    target_ratio: float = 0.5,
    micro: MicroCompaction | None = MicroCompaction(),  # frozen, safe to share
    keep_head: int = 1,
    keep_tail: int = 6,
    summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
    summary_max_tokens: int = 2048,
    summary_input_tokens: int | None = None,
    on_overflow: OverflowCallback | None = None,
    model: str | None = None,
) -> ContextCompactor:
    """A context transform for ``AgentSession(transform=...)``.

    Before every model call it cuts old tool results (``micro``; None turns that off), and when the
    estimate passes ``threshold_ratio`` x ``max_context_tokens`` it summarises the middle of the
    history with the provider ``resolve_provider`` gives (a cheaper model is fine), down to about
    ``target_ratio`` of the window. ``max_context_tokens`` defaults to the registry's context window
    of ``model`` or, without it, of the summarising provider's model: pass ``model`` (the agent's
    model) when the summariser is a different one. ``on_overflow`` (sync or async) receives the text
    summarised away, e.g. to store it in a ``MemoryStore``. ``summary_input_tokens`` caps the
    transcript sent per summariser call (see ``compact``); the other settings are ``compact``'s.
    """
    return ContextCompactor(
        resolve_provider, max_context_tokens, threshold_ratio, target_ratio=target_ratio, micro=micro,
        keep_head=keep_head, keep_tail=keep_tail, summary_prompt=summary_prompt,
        summary_max_tokens=summary_max_tokens, summary_input_tokens=summary_input_tokens,
        on_overflow=on_overflow, model=model,
    )


def _window_of(model: str) -> int:
    info = get_model_info(model)
    if info is None:
        raise ValueError(
            f"the context window of model {model!r} is unknown: pass max_context_tokens=..., or add the "
            "model with agcore.llm.register_model(ModelInfo(...))"
        )
    return info.context_window


def _total(messages: Sequence[AnyMessage]) -> int:
    return sum(estimate_one_message_tokens(m) for m in messages)
