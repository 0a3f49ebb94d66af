"""``default_compaction``: compaction on by default where the context window is small.

A small local model served with a few thousand tokens of context (llama.cpp's ``-c 4096``) fills its
window after a handful of file reads; without compaction the turn then ends with the server's
overflow error. Large windows are left alone (compaction costs a summariser call and loses detail).
The window is the one given (what the server was started with: it is the one that counts) or, for a
model the registry knows, the registry's.
"""

from __future__ import annotations

from agcore.context._transform import ContextCompactor, create_context_transform
from agcore.llm.models import get_model_info
from agcore.llm.provider import LLMProvider

__all__ = ["MAX_TOKENS_CAP", "SMALL_WINDOW", "default_compaction", "default_max_tokens", "known_window"]

#: Below this many tokens of context, compaction is on by default.
SMALL_WINDOW = 32_768
# The summary's share of a small window: 2048 tokens of summary would not leave room for the tail.
_SUMMARY_SHARE = 8
#: The most ``default_max_tokens`` gives one reply.
MAX_TOKENS_CAP = 4096
# A reply's share of a small window: compaction keeps the history under 80% of it
# (``threshold_ratio``), so a fifth for the reply still fits, even on servers that refuse a request
# whose prompt and max_tokens together exceed the window (vLLM).
_REPLY_SHARE = 5


def known_window(model_id: str) -> int | None:
    """The registry's context window for ``model_id`` (None for a model it does not know)."""
    info = get_model_info(model_id)
    return info.context_window if info is not None else None


def default_compaction(
    provider: LLMProvider,
    *,
    context_window: int | None = None,
    enabled: bool | None = None,
    small_window: int = SMALL_WINDOW,
) -> ContextCompactor | None:
    """The compaction transform a session on ``provider`` gets by default, or None for none.

    ``enabled=None`` (auto): on when the window (``context_window``, else the registry's for the
    provider's model) is below ``small_window``; off when it is larger or unknown. ``enabled=True``
    forces it on (``ValueError`` when no window is known: say how large it is), ``False`` off. The
    provider also writes the summaries, with a summary budget scaled to the window.
    """
    if enabled is False:
        return None
    if context_window is not None and context_window < 256:
        raise ValueError(f"a context window of {context_window} tokens is too small to work in; give "
                         "the window the server was started with (llama-server -c N), e.g. 4096")
    window = context_window if context_window is not None else known_window(provider.model_id)
    if window is None:
        if enabled:
            raise ValueError(
                f"compaction needs the context window of {provider.model_id!r}, which the model "
                "registry does not know: give it (the server's context size, e.g. 4096 for "
                "llama-server -c 4096)"
            )
        return None
    if enabled is None and window >= small_window:
        return None
    return create_context_transform(
        provider, max_context_tokens=window, summary_max_tokens=max(128, min(2048, window // _SUMMARY_SHARE)),
        model=provider.model_id,
    )


def default_max_tokens(
    provider: LLMProvider, *, context_window: int | None = None, small_window: int = SMALL_WINDOW
) -> int | None:
    """The output cap (``AgentConfig.max_tokens``) a session on ``provider`` gets by default: a fifth
    of a small window (``context_window``, else the registry's), at most ``MAX_TOKENS_CAP``; None for
    a large or unknown window (the provider's own default then holds).

    Local servers put no cap on a reply unless asked: a small model that starts repeating itself
    fills the window (one reply in the issue-26 runs ran past 1,800 tokens of one repeated block).
    """
    window = context_window if context_window is not None else known_window(provider.model_id)
    if window is None or window >= small_window:
        return None
    return max(1, min(window // _REPLY_SHARE, MAX_TOKENS_CAP))
