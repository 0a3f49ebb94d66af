"""The summary a compaction leaves behind, and the summariser call that writes it.

The summary is a ``TextBlock`` whose text is exactly what the agent layer's ``Summary`` message turns
into for the model (``<conversation_summary>`` ... ``</conversation_summary>``, see
``agcore.agent.Summary.to_llm_text``): whether a summary came from this package's compaction or was
stored as a ``Summary`` AgentMessage, the model reads the same thing and ``is_summary_block`` knows it.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Sequence

from agcore.context._tokens import estimate_one_message_tokens
from agcore.llm.errors import LLMError
from agcore.llm.provider import LLMProvider
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    LLMRequest,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = [
    "DEFAULT_SUMMARY_PROMPT",
    "SUMMARY_CLOSE",
    "SUMMARY_OPEN",
    "CompactionError",
    "OverflowCallback",
    "is_summary_block",
    "render_transcript",
    "summarise",
    "summary_block",
    "summary_text",
]

SUMMARY_OPEN = "<conversation_summary>"
SUMMARY_CLOSE = "</conversation_summary>"

#: Receives the text of the messages a compaction summarised away (e.g. to store it in memory).
OverflowCallback = Callable[[str], "Awaitable[None] | None"]

DEFAULT_SUMMARY_PROMPT = """\
Summarise the conversation transcript below between a user and an AI agent that uses tools. The agent \
will continue the work with ONLY your summary in place of this part of the conversation, so keep \
everything it needs: the user's goals and constraints, decisions made and why, facts learned (file \
paths, names, numbers, errors and their causes), what was done and its outcome, and what is still \
open. Drop pleasantries and repetition. Write in the language of the conversation, as concise \
bullet points, without any preamble."""

_SYSTEM = "You write faithful, compact summaries of agent conversations. Never invent facts."


class CompactionError(RuntimeError):
    """The summariser could not summarise the history (its model call failed or said nothing)."""


def summary_block(text: str) -> TextBlock:
    """A text block holding ``text`` inside the summary wrapper, as compaction writes it."""
    return TextBlock(text=f"{SUMMARY_OPEN}\n{text.strip()}\n{SUMMARY_CLOSE}")


def is_summary_block(block: ContentBlock) -> bool:
    """Whether ``block`` is a summary block (a ``TextBlock`` that starts with the summary wrapper)."""
    return isinstance(block, TextBlock) and block.text.startswith(SUMMARY_OPEN)


def summary_text(block: TextBlock) -> str:
    """The summary inside a summary block (its text without the wrapper)."""
    text = block.text.removeprefix(SUMMARY_OPEN)
    return text.removesuffix(SUMMARY_CLOSE).strip()


def _render_block(block: ContentBlock, speaker: str) -> str | None:
    if isinstance(block, TextBlock):
        if is_summary_block(block):
            return f"[summary of what came before]\n{summary_text(block)}"
        return f"[{speaker}]\n{block.text}" if block.text.strip() else None
    if isinstance(block, ImageBlock):
        return f"[{speaker} shared an image]"
    if isinstance(block, ThinkingBlock):
        return None  # reasoning is the model's scratch work, not part of the record
    if isinstance(block, ToolUseBlock):
        arguments = json.dumps(block.input, ensure_ascii=False)
        return f"[assistant called tool {block.name} (call {block.id})]\n{arguments}"
    if isinstance(block, ToolResultBlock):
        status = "error" if block.is_error else "result"
        images = sum(1 for b in block.content if isinstance(b, ImageBlock)) if isinstance(
            block.content, list) else 0
        extra = f" (+{images} image{'s' if images > 1 else ''})" if images else ""
        return f"[tool {status} for call {block.tool_use_id}{extra}]\n{block.text}"
    return None


def render_transcript(messages: Sequence[UserMessage | AssistantMessage]) -> str:
    """``messages`` as plain text for a summariser (and for ``on_overflow``)."""
    parts: list[str] = []
    for message in messages:
        speaker = "user" if isinstance(message, UserMessage) else "assistant"
        blocks = message.blocks if isinstance(message, UserMessage) else message.content
        parts.extend(p for b in blocks if (p := _render_block(b, speaker)) is not None)
    return "\n\n".join(parts)


def _chunks(
    messages: Sequence[UserMessage | AssistantMessage], chunk_tokens: int
) -> list[list[UserMessage | AssistantMessage]]:
    chunks: list[list[UserMessage | AssistantMessage]] = [[]]
    size = 0
    for message in messages:
        tokens = estimate_one_message_tokens(message)
        if chunks[-1] and size + tokens > chunk_tokens:
            chunks.append([])
            size = 0
        chunks[-1].append(message)
        size += tokens
    return chunks


async def summarise(
    messages: Sequence[UserMessage | AssistantMessage],
    *,
    provider: LLMProvider,
    previous: str | None = None,
    prompt: str = DEFAULT_SUMMARY_PROMPT,
    max_tokens: int = 2048,
    chunk_tokens: int = 50_000,
) -> str:
    """A summary of ``previous`` (an earlier summary) followed by ``messages``, written by
    ``provider``. A transcript larger than ``chunk_tokens`` is summarised chunk by chunk, each chunk
    folded into the summary so far, so the summariser's own window is never exceeded.

    Raises ``CompactionError`` when the model call fails or returns no text.
    """
    summary = previous
    for chunk in _chunks(messages, chunk_tokens):
        parts = [prompt]
        if summary:
            parts.append(f"The summary of the conversation before this transcript (fold it in):\n"
                         f"{SUMMARY_OPEN}\n{summary}\n{SUMMARY_CLOSE}")
        parts.append(f"<transcript>\n{render_transcript(chunk)}\n</transcript>")
        try:
            request = LLMRequest.build("\n\n".join(parts), system=_SYSTEM, max_tokens=max_tokens)
            response = await provider.complete(request)
        except LLMError as error:
            raise CompactionError(
                f"summarising the history with {provider.provider_name}:{provider.model_id} failed "
                f"({error}); check that model's credentials and limits, or give compaction another "
                "provider"
            ) from error
        text = response.text.strip()
        if not text:
            raise CompactionError(
                f"the summariser {provider.provider_name}:{provider.model_id} returned no text "
                f"(stop reason {response.stop_reason}); raise its max_tokens or use another model"
            )
        summary = text
    assert summary is not None  # at least one chunk was summarised
    return summary


async def call_overflow(callback: OverflowCallback | None, text: str) -> None:
    if callback is None or not text:
        return
    outcome = callback(text)
    if inspect.isawaitable(outcome):
        await outcome
