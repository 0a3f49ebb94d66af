"""Context management: token estimates, micro-compaction, compaction, and the loop's transform.

```python
from agcore.context import create_context_transform

transform = create_context_transform(cheap_provider, model="claude-sonnet-4-6")
session = AgentSession(agent, bundle=bundle, transform=transform)
```

* ``estimate_tokens`` / ``estimate_message_tokens``: no tokenizer download, honest for CJK as for
  Latin text (about ±15%; see ``_tokens``).
* ``truncate_old_tool_results``: old tool results cut to head + marker + tail, the last N whole.
* ``compact``: past ``threshold_ratio`` of the window, the middle of the history is summarised by a
  model; head and tail stay, tool calls stay with their results, one huge result is cut first.
* ``create_context_transform``: both, for ``AgentSession(transform=...)``, remembering its summary.
* ``keep_last_messages``: the cheap alternative for small windows: the task and the last N messages,
  never parting a tool call from its result, no model call.
* ``default_compaction``: that transform where the window is small (under ``SMALL_WINDOW`` tokens:
  small local models), None elsewhere; what the CLI gives its sessions.
* ``default_max_tokens``: an output cap for a small window (a fifth of it, at most ``MAX_TOKENS_CAP``),
  None elsewhere; the CLI's default ``AgentConfig.max_tokens``.

This layer sees only LLM messages. Its summary is a ``TextBlock`` in a user message, with exactly the
text the agent layer's ``Summary`` AgentMessage becomes for the model (``<conversation_summary>``);
``is_summary_block`` recognises both, and a compaction folds an earlier summary into the new one.
"""

from __future__ import annotations

from agcore.context._auto import (
    MAX_TOKENS_CAP,
    SMALL_WINDOW,
    default_compaction,
    default_max_tokens,
    known_window,
)
from agcore.context._compaction import cap_tool_results, compact, join_summary, safe_cut_points
from agcore.context._count_trim import DEFAULT_MAX_MESSAGES, keep_last_messages, trim_messages
from agcore.context._micro import cut_middle, truncate_old_tool_results
from agcore.context._summary import (
    DEFAULT_SUMMARY_PROMPT,
    SUMMARY_CLOSE,
    SUMMARY_OPEN,
    CompactionError,
    OverflowCallback,
    is_summary_block,
    render_transcript,
    summarise,
    summary_block,
    summary_text,
)
from agcore.context._tokens import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    estimate_block_tokens,
    estimate_message_tokens,
    estimate_tokens,
)
from agcore.context._transform import (
    ContextCompactor,
    MicroCompaction,
    SummarizerSource,
    create_context_transform,
)

__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "DEFAULT_SUMMARY_PROMPT",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "MAX_TOKENS_CAP",
    "SMALL_WINDOW",
    "SUMMARY_CLOSE",
    "SUMMARY_OPEN",
    "CompactionError",
    "ContextCompactor",
    "MicroCompaction",
    "OverflowCallback",
    "SummarizerSource",
    "cap_tool_results",
    "compact",
    "create_context_transform",
    "cut_middle",
    "default_compaction",
    "default_max_tokens",
    "estimate_block_tokens",
    "estimate_message_tokens",
    "estimate_tokens",
    "is_summary_block",
    "join_summary",
    "keep_last_messages",
    "known_window",
    "render_transcript",
    "safe_cut_points",
    "summarise",
    "summary_block",
    "summary_text",
    "trim_messages",
    "truncate_old_tool_results",
]
