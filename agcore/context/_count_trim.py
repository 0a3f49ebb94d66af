"""Count-based trimming: only the last N messages go to the model, plus the first user message.

For small windows (a local model on 8k tokens) a token estimate and a summariser call per
compaction can cost more than they save. Seed 002's coding agent keeps the last 30 messages and
the task instead; this is that, done safely: the cut never parts a tool call from its result, and
the kept history still alternates user and assistant, which strict chat templates (llama.cpp)
require. The session's stored history is never changed: the transform shapes each request only.

```python
session = AgentSession(agent, bundle=bundle, transform=keep_last_messages(30))
```
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agcore.context._compaction import AnyMessage, safe_cut_points
from agcore.llm.types import AssistantMessage, ContentBlock, Message, TextBlock, UserMessage

__all__ = ["DEFAULT_MAX_MESSAGES", "keep_last_messages", "trim_messages"]

#: Seed 002's choice for an 8k-token window.
DEFAULT_MAX_MESSAGES = 30


def trim_messages(
    messages: Sequence[AnyMessage], max_messages: int = DEFAULT_MAX_MESSAGES, *, note: bool = True,
) -> list[AnyMessage]:
    """At most ``max_messages`` of ``messages``: everything up to the first user message (the task),
    then the longest tail that fits and starts where no tool call is parted from its result. With
    ``note``, the first user message says how many messages were left out. Unchanged when the
    history fits or no such tail exists."""
    if max_messages < 2:
        raise ValueError(f"max_messages must be at least 2 (the task and a reply), not {max_messages}")
    if len(messages) <= max_messages:
        return list(messages)
    head_end = next((i + 1 for i, m in enumerate(messages) if isinstance(m, UserMessage)), 0)
    if head_end == 0 or head_end >= max_messages:
        return list(messages)
    safe = safe_cut_points(messages)
    if not safe[head_end]:
        return list(messages)  # the task message itself carries tool results: leave it whole
    earliest = max(head_end, len(messages) - (max_messages - head_end))
    start = next((t for t in range(earliest, len(messages)) if safe[t] and _can_follow(messages[t])), None)
    if start is None:
        return list(messages)
    dropped = start - head_end
    head = list(messages[:head_end])
    tail = list(messages[start:])
    extra: list[ContentBlock] = []
    if note:
        extra.append(TextBlock(text=f"[{dropped} earlier message(s) of this conversation are left out "
                                    "here to fit the context window.]"))
    first = tail[0]
    if isinstance(first, UserMessage):  # two user messages in a row: one, as templates require
        extra.extend(first.blocks)
        tail.pop(0)
    if extra:
        task = head[-1]
        assert isinstance(task, UserMessage)
        head[-1] = UserMessage(content=[*task.blocks, *extra])
    return head + tail


def _can_follow(message: AnyMessage) -> bool:
    """Whether a kept tail may start at ``message``, right after the task: a reply, or user text
    (merged into the task message). A user message carrying tool results may not: its calls are gone."""
    return isinstance(message, AssistantMessage) or not message.tool_results


def keep_last_messages(
    max_messages: int = DEFAULT_MAX_MESSAGES, *, note: bool = True,
) -> Callable[[list[Message]], list[Message]]:
    """A context transform for ``AgentSession(transform=...)`` that sends at most ``max_messages``
    messages (``trim_messages``); no model call, no token estimate."""
    if max_messages < 2:
        raise ValueError(f"max_messages must be at least 2 (the task and a reply), not {max_messages}")

    def transform(messages: list[Message]) -> list[Message]:
        return trim_messages(messages, max_messages, note=note)

    transform.__qualname__ = f"keep_last_messages({max_messages})"
    return transform
