"""Compaction: when the history nears the context window, its middle becomes a model-written summary.

The head (usually the task) and the tail (the work in progress) stay as they were. Cut points only
fall where no tool call is separated from its result: every vendor rejects a history in which a
``tool_use`` is not answered in the next user message. A tool result too large for the budget on its
own is cut first (``cut_middle``), so one giant output cannot make compaction impossible.

The result never has two user messages in a row: where the summary would follow a user message (the
head's last) or precede one (the tail's first), it is merged into that message as its own block.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agcore.context._micro import MIN_MAX_CHARS, cut_middle
from agcore.context._summary import (
    DEFAULT_SUMMARY_PROMPT,
    OverflowCallback,
    call_overflow,
    is_summary_block,
    render_transcript,
    summarise,
    summary_block,
    summary_text,
)
from agcore.context._tokens import estimate_block_tokens, estimate_one_message_tokens
from agcore.llm.provider import LLMProvider
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    TextBlock,
    ToolResultBlock,
    UserMessage,
)

__all__ = ["cap_tool_results", "compact", "join_summary", "safe_cut_points"]

AnyMessage = UserMessage | AssistantMessage


def safe_cut_points(messages: Sequence[AnyMessage]) -> list[bool]:
    """``result[i]`` says whether the history may be cut between ``messages[i-1]`` and
    ``messages[i]`` (``i`` from 0 to ``len(messages)``) without parting a tool call from its result."""
    used_at: dict[str, int] = {}
    for i, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                used_at.setdefault(call.id, i)
    # +1 where a pair opens (after its call), -1 after its result: a cut inside any pair is unsafe.
    delta = [0] * (len(messages) + 2)
    for j, message in enumerate(messages):
        if isinstance(message, UserMessage):
            for result in message.tool_results:
                at = used_at.get(result.tool_use_id)
                if at is not None and at < j:
                    delta[at + 1] += 1
                    delta[j + 1] -= 1
    safe: list[bool] = []
    open_pairs = 0
    for i in range(len(messages) + 1):
        open_pairs += delta[i]
        safe.append(open_pairs == 0)
    return safe


def cap_tool_results(messages: Sequence[AnyMessage], max_tokens: int) -> list[AnyMessage]:
    """Cut every tool result estimated above ``max_tokens`` (the last ones included) to about that."""
    out: list[AnyMessage] = []
    for message in messages:
        if not isinstance(message, UserMessage) or isinstance(message.content, str):
            out.append(message)
            continue
        blocks: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and (tokens := estimate_block_tokens(block)) > max_tokens:
                text = block.text
                chars = max(MIN_MAX_CHARS, len(text) * max_tokens // tokens)
                block = block.model_copy(update={"content": cut_middle(text, chars)})
            blocks.append(block)
        changed = any(a is not b for a, b in zip(blocks, message.content, strict=True))
        out.append(message.model_copy(update={"content": blocks}) if changed else message)
    return out


def join_summary(
    head: Sequence[AnyMessage], summary: TextBlock, tail: Sequence[AnyMessage]
) -> list[AnyMessage]:
    """``head`` + a user message holding ``summary`` + ``tail``, merging the summary into an adjacent
    user message instead of putting two user messages in a row."""
    before = list(head)
    after = list(tail)
    blocks: list[ContentBlock] = [summary]
    if before and isinstance(last := before[-1], UserMessage):
        before.pop()
        blocks = [*last.blocks, summary]
    if after and isinstance(first := after[0], UserMessage):
        after.pop(0)
        blocks = [*blocks, *first.blocks]
    return [*before, UserMessage(content=blocks), *after]


@dataclass(slots=True)
class Plan:
    """Keep ``messages[:head]``, summarise ``messages[start:tail]`` (after ``start`` comes what an
    earlier summary covers), keep ``messages[tail:]``."""

    head: int
    tail: int


def plan_cut(
    messages: Sequence[AnyMessage],
    *,
    keep_head: int,
    keep_tail: int,
    tail_budget: int,
    earliest_tail: int = 0,
) -> Plan | None:
    """Where to cut: the head is ``keep_head`` messages (fewer if that parts a pair); the tail is the
    longest run of recent messages that fits ``tail_budget`` tokens, and never fewer than the last
    ``keep_tail`` messages (nor than the last one), even past the budget: those are the work in
    progress, never summarised. None when no safe cut leaves a middle to summarise."""
    n = len(messages)
    safe = safe_cut_points(messages)
    head = min(keep_head, n)
    while head > 0 and not safe[head]:
        head -= 1
    latest = n - max(keep_tail, 1)  # the latest the tail may start
    candidates = [t for t in range(max(head + 1, earliest_tail), latest + 1) if safe[t]]
    if not candidates:
        return None
    suffix = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + estimate_one_message_tokens(messages[i])
    for t in candidates:
        if suffix[t] <= tail_budget:
            return Plan(head=head, tail=t)
    # Not even the last safe tail fits: keep it anyway (its results are already capped).
    return Plan(head=head, tail=candidates[-1])


def split_head_summary(head: Sequence[AnyMessage]) -> tuple[list[AnyMessage], str | None]:
    """The head without summary blocks left by an earlier compaction, and that summary's text (a new
    summary folds the old one in rather than stacking up beside it)."""
    found: list[str] = []
    kept: list[AnyMessage] = []
    for message in head:
        if isinstance(message, UserMessage):
            summaries = [b for b in message.blocks if is_summary_block(b)]
            if summaries:
                found.extend(summary_text(b) for b in summaries if isinstance(b, TextBlock))
                rest = [b for b in message.blocks if not is_summary_block(b)]
                if rest:
                    kept.append(UserMessage(content=rest))
                continue
        kept.append(message)
    return kept, ("\n\n".join(found) if found else None)


async def compact(
    messages: Sequence[AnyMessage],
    *,
    provider: LLMProvider,
    max_context_tokens: int,
    threshold_ratio: float = 0.8,
    target_ratio: float = 0.5,
    keep_head: int = 1,
    keep_tail: int = 6,
    summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
    summary_max_tokens: int = 2048,
    summary_input_tokens: int | None = None,
    on_overflow: OverflowCallback | None = None,
) -> list[AnyMessage]:
    """``messages`` unchanged while their estimate is at most ``threshold_ratio`` x
    ``max_context_tokens``; past it, the middle is summarised by ``provider`` so the result aims at
    ``target_ratio`` of the window: the first ``keep_head`` messages, a summary block
    (``is_summary_block``), and as many recent messages as fit, never fewer than the last
    ``keep_tail`` (kept even when they alone exceed the target).

    A tool result larger than a quarter of the target is cut first; if that alone brings the history
    under the threshold, no summary is written. ``on_overflow`` (sync or async) receives the
    transcript of the messages summarised away. The summariser is sent at most
    ``summary_input_tokens`` of transcript per call (default: what fits under the threshold of this
    same window; set it for a summariser with a smaller window), a longer middle is summarised in
    chunks. When no cut can be made without parting a tool call from its result or summarising one
    of the last ``keep_tail`` messages, the history is returned with only its huge results cut. Raises
    ``CompactionError`` when summarising fails.
    """
    _check(max_context_tokens, threshold_ratio, target_ratio, keep_head, keep_tail)
    history = list(messages)
    budget = int(max_context_tokens * threshold_ratio)
    if _total(history) <= budget:
        return history
    target = int(max_context_tokens * target_ratio)
    history = cap_tool_results(history, max(1, target // 4))
    if _total(history) <= budget:
        return history
    reserve = summary_max_tokens + 16
    head_tokens = _total(history[:keep_head])
    plan = plan_cut(history, keep_head=keep_head, keep_tail=keep_tail,
                    tail_budget=target - head_tokens - reserve)
    if plan is None:
        return history
    head, previous = split_head_summary(history[: plan.head])
    middle = history[plan.head : plan.tail]
    text = await summarise(middle, provider=provider, previous=previous, prompt=summary_prompt,
                           max_tokens=summary_max_tokens,
                           chunk_tokens=summary_input_tokens or chunk_budget(budget, summary_max_tokens))
    await call_overflow(on_overflow, render_transcript(middle))
    return join_summary(head, summary_block(text), history[plan.tail :])


def chunk_budget(budget: int, summary_max_tokens: int) -> int:
    """Transcript tokens per summariser call: the threshold, less the reply and the prompt."""
    return max(1000, budget - summary_max_tokens - 500)


def _total(messages: Sequence[AnyMessage]) -> int:
    return sum(estimate_one_message_tokens(m) for m in messages)


def _check(window: int, threshold: float, target: float, keep_head: int, keep_tail: int) -> None:
    if window <= 0:
        raise ValueError(f"max_context_tokens must be positive, not {window}")
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold_ratio must be in (0, 1], not {threshold}")
    if not 0 < target <= threshold:
        raise ValueError(
            f"target_ratio ({target}) must be positive and at most threshold_ratio ({threshold}): "
            "compaction aims below the point that triggers it"
        )
    if keep_head < 0 or keep_tail < 0:
        raise ValueError(f"keep_head and keep_tail must be 0 or more, not {keep_head} and {keep_tail}")
