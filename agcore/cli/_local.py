"""The options that make small local models usable from the CLI: ``--text-tools``,
``--constrained-calls``, ``--max-turns``, ``--max-tool-calls``, ``--temperature``,
``--context-window``, ``--compact``, ``--max-tokens`` and ``--intent``, turned into config changes,
capabilities and a session's compaction transform.

Compaction is on by default where the window is small (``agcore.context.default_compaction``: under
32k tokens), which for a model the registry does not know means: when ``--context-window`` says how
large the server's window is. Where the window is small, replies are capped too
(``agcore.context.default_max_tokens``: a fifth of it) unless ``--max-tokens`` says otherwise: local
servers cap nothing by default, and a small model that loops fills the window.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agcore.cli._errors import CliError, ExitCode
from agcore.llm.provider import LLMProvider

__all__ = ["TEXT_TOOL_MODES", "LocalOptions", "text_tools_setting"]

#: ``--text-tools`` values.
TEXT_TOOL_MODES = ("on", "off", "auto")


def text_tools_setting(mode: str | None) -> str | None:
    """``AgentConfig.text_mode_tools`` for ``--text-tools MODE`` (``on``, ``off`` or ``auto``); None
    when not given, so the config's default (``"auto"``) stays."""
    if mode is None:
        return None
    if mode in ("on", "off", "auto"):
        return mode
    raise CliError(f"--text-tools {mode!r}: choose on, off or auto", ExitCode.USAGE)


@dataclass(frozen=True, slots=True)
class LocalOptions:
    """The loop and context options given on the command line (None: not given)."""

    text_tools: str | None = None
    max_turns: int | None = None
    temperature: float | None = None
    context_window: int | None = None
    compact: bool | None = None
    max_tokens: int | None = None
    max_tool_calls: int | None = None
    #: ``--intent``: off, keywords or model (None: off).
    intent: str | None = None
    #: ``--constrained-calls``: ``AgentConfig.constrained_calls`` (None: the config's default).
    constrained_calls: str | None = None
    #: The window came from the server, not from --context-window (said on the first lines).
    window_from_server: bool = False

    async def with_served_window(self, provider: LLMProvider, base_url: str | None) -> LocalOptions:
        """These options with the context window a local server reports for ``provider``'s model
        when ``--context-window`` was not given (compaction and the reply cap then follow it)."""
        from agcore.cli._served import served_window

        if self.context_window is not None or base_url is None:
            return self
        window = await served_window(base_url, provider.model_id)
        if window is None:
            return self
        return replace(self, context_window=window, window_from_server=True)

    def reply_cap(self, provider: LLMProvider | None) -> int | None:
        """``max_tokens`` for every model call: ``--max-tokens``, else the small-window default."""
        from agcore.context import default_max_tokens

        if self.max_tokens is not None or provider is None:
            return self.max_tokens
        return default_max_tokens(provider, context_window=self.context_window)

    def config_changes(self, provider: LLMProvider | None = None) -> dict[str, Any]:
        """``AgentConfig`` fields these options change (the reply cap needs the ``provider``: the
        registry may know its window)."""
        changes: dict[str, Any] = {}
        cap = self.reply_cap(provider)
        if cap is not None:
            changes["max_tokens"] = cap
        text_mode = text_tools_setting(self.text_tools)
        if text_mode is not None:
            changes["text_mode_tools"] = text_mode
        if self.constrained_calls is not None:
            changes["constrained_calls"] = self.constrained_calls
        if self.max_turns is not None:  # one cap for the user: model calls and tool rounds alike
            changes["max_turns"] = self.max_turns
            changes["max_tool_turns"] = self.max_turns
        if self.temperature is not None:
            changes["temperature"] = self.temperature
        if self.max_tool_calls is not None:
            changes["max_tool_calls"] = self.max_tool_calls
        return changes

    def capabilities(self) -> tuple[Any, ...]:
        """The capabilities these options add to the bundle (the intent gate of ``--intent``)."""
        if self.intent in (None, "off"):
            return ()
        from agcore.agent.intent import IntentGate, ModelIntentClassifier

        return (IntentGate(ModelIntentClassifier() if self.intent == "model" else None),)

    def arguments(self) -> list[str]:
        """These options as command-line arguments (for the command that resumes a session)."""
        args: list[str] = []
        if self.text_tools is not None:
            args += ["--text-tools", self.text_tools]
        if self.constrained_calls is not None:
            args += ["--constrained-calls", self.constrained_calls]
        if self.max_turns is not None:
            args += ["--max-turns", str(self.max_turns)]
        if self.temperature is not None:
            args += ["--temperature", repr(self.temperature)]
        if self.context_window is not None and not self.window_from_server:  # asked again on resume
            args += ["--context-window", str(self.context_window)]
        if self.compact is not None:
            args.append("--compact" if self.compact else "--no-compact")
        if self.max_tokens is not None:
            args += ["--max-tokens", str(self.max_tokens)]
        if self.max_tool_calls is not None:
            args += ["--max-tool-calls", str(self.max_tool_calls)]
        if self.intent is not None:
            args += ["--intent", self.intent]
        return args

    def notes(self, transform: Any, provider: LLMProvider) -> list[str]:
        """The lines a run starts with about compaction and the reply cap."""
        served = (
            f"context window: {self.context_window:,} tokens, as the server reports (--context-window N "
            "to change)"
            if self.window_from_server and self.context_window is not None
            else None
        )
        lines = [served, self.describe_compaction(transform), self.describe_reply_cap(provider)]
        return [line for line in lines if line is not None]

    def describe_reply_cap(self, provider: LLMProvider) -> str | None:
        """The line saying replies are capped by default (None: not by default)."""
        cap = self.reply_cap(provider)
        if cap is None or self.max_tokens is not None:
            return None
        return f"replies: at most {cap:,} tokens each (small context window; --max-tokens N to change)"

    def compaction(self, provider: LLMProvider) -> Any:
        """The session's context transform: compaction where the window is small or ``--compact``
        asks for it (None: none). ``CliError`` (exit 2) when ``--compact`` has no window to work with."""
        from agcore.context import default_compaction

        try:
            return default_compaction(provider, context_window=self.context_window, enabled=self.compact)
        except ValueError as exc:
            raise CliError(f"--compact: {exc} with --context-window N.", ExitCode.USAGE) from None

    def describe_compaction(self, transform: Any) -> str | None:
        """The line saying compaction is on and against which window (None: nothing to say, it is
        off and nobody asked about it)."""
        if transform is not None:
            return f"compaction: on, context window {transform.max_context_tokens:,} tokens"
        if self.compact is False:
            return None
        if self.context_window is not None:
            return f"compaction: off (a context window of {self.context_window:,} tokens is not small)"
        return None
