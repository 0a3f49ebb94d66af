"""Text-mode tool calling, for models without native tool support (small local models, seed 002).

The tools are described in the system prompt and the model writes its calls in its text, as JSON in
``<tool_call>`` tags (the form Qwen/Hermes-style chat templates teach); ``_text_calls`` reads every
call however it was written, and each becomes an ordinary ``ToolUseBlock``, so history, hooks and
the tool phase are the same in both modes. Only the request changes: native calls and results in the
history are rendered back to text, results under a label the model is told never to write
(``<tool_response``), with a stop sequence on that label, so a model that starts to make up a result
is stopped by the server (and what it made up is cut off here if the server has no stop sequences).

Which mode a model call uses (``call_mode``): ``AgentConfig.text_mode_tools`` ``"on"`` or ``"off"``
decide; under ``"auto"`` (the default) text mode is used for a model the registry says has no tool
calling, and for a session that switched to it; a model the registry does not know (or knows as
local) gets native tools, and its reply is checked for calls written as text: one well-formed call to
an offered tool is run, and the session switches to text mode for good (``switch_to_text_mode``).
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from agcore._clock import new_id
from agcore.agent._events import TextModeSwitched
from agcore.agent.textcalls._text_calls import RESULT_LABEL, TextCall, TextCalls, parse_text_calls
from agcore.llm.models import get_model_info
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    LLMRequest,
    Message,
    StopReason,
    TextBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

if TYPE_CHECKING:
    from agcore.agent._config import AgentConfig
    from agcore.agent.session_like import SessionLike

__all__ = [
    "MAX_REREADS",
    "CallMode",
    "TextModeSetting",
    "TextRead",
    "call_mode",
    "coerce_text_mode",
    "describe_tools",
    "read_text_calls",
    "switch_to_text_mode",
    "text_mode_request",
]

_log = logging.getLogger("agcore.agent")

#: ``AgentConfig.text_mode_tools``: ``"auto"`` (switch when a model writes its calls as text),
#: ``"on"`` (always text mode), ``"off"`` (never).
TextModeSetting = Literal["auto", "on", "off"]
#: How one model call is made: text mode, native tools checked for text calls, or native tools only.
CallMode = Literal["text", "auto", "native"]

# Providers (ModelInfo.provider, or the provider's own name) whose models run locally: auto mode
# watches them even when the registry lists them.
_LOCAL_PROVIDERS = frozenset({"ollama", "llama.cpp", "llamacpp", "llama-cpp", "lmstudio", "vllm", "local"})

_PROTOCOL = """\
# Tools
You can use the tools listed below. To use a tool, write a tool call in exactly this form:
<tool_call>
{"name": "<tool name>", "arguments": {"<argument name>": "<argument value>"}}
</tool_call>
Put the name of one tool from the list below in place of <tool name>, and give the arguments its \
schema asks for. You may write several tool calls, one after another. After your last tool call, \
stop: end your reply there.
Never write a tool's result yourself and never write <tool_response>: the system runs the tools and \
sends their results back to you in the next message, each inside <tool_response> tags.
When you need no tool, answer in plain text, without a tool call.
Work in small steps. Before you write or change a file, first use tools to look at what you need \
(read the file, list the directory, run the command) and wait for their results: never guess \
contents, counts or outputs.

Available tools:
"""

_CONTINUE_LEAD = "Continue with the task:"
_CONTINUE = (
    "Write the next tool call now for the part of the task still to do (for example, writing the file "
    "the task asks for). Only when nothing is left to do, answer in plain text."
)
#: After results that visibly finish the step (the file the task names was written, or the model said
#: it is finished): no push for another call, which kept small models going until the repetition
#: guard stopped them.
_WRAP_UP = (
    "Your last tool call succeeded{what}. If that completes the task, answer now in plain text saying "
    "what you did, without a tool call; write another tool call only for a part of the task still to do."
)
#: What the reminder says in every form: a reply made of these words repeats the runtime's own
#: (``is_reminder_echo``).
REMINDER_TEXTS = (_CONTINUE_LEAD, _CONTINUE, _WRAP_UP.replace("{what}", ""))
_WRITE_TOOLS = frozenset({"write_file", "edit_file", "apply_patch"})
_FINISHED = re.compile(
    r"\b(?:task is (?:now )?(?:done|complete|finished)|i(?:'ve| have) (?:now )?(?:finished|completed)|"
    r"all done|that completes the task)\b", re.IGNORECASE)
_NOTE_PROBLEMS = "Part of your last reply looked like a tool call but could not be read, so it was not run:"
_NOTE_HOW = (
    'To call a tool, write <tool_call>{"name": "<tool name>", "arguments": {...}}</tool_call> with the '
    "name of a tool from the list in place of <tool name>; to answer, write plain text without a tool "
    "call."
)
_NOTE_INVENTED = (
    "Your last reply went on after its tool call with a result you wrote yourself; that text was "
    "discarded. Results come only from the system, in <tool_response> tags: after your tool calls, "
    "stop and wait for them."
)
_NOTE_INVENTED_ALONE = (
    "Your last reply held a tool result you wrote yourself, without calling a tool; that text was "
    "discarded. To use a tool, write a tool call and stop: the system runs it and sends the result."
)


def coerce_text_mode(value: object) -> TextModeSetting | None:
    """``value`` as a ``TextModeSetting``: True is ``"on"``, False is ``"off"``, None stays None."""
    if value is None:
        return None
    if value is True:
        return "on"
    if value is False:
        return "off"
    if value in ("auto", "on", "off"):
        return value
    raise ValueError(f"text_mode_tools must be 'auto', 'on' or 'off' (or True/False), not {value!r}")


def call_mode(
    session: object, config: AgentConfig, model_id: str, provider_name: str = ""
) -> CallMode:
    """How the next model call offers tools: the agent's ``text_mode_tools`` attribute or the
    config's ``"on"``/``"off"`` decide; under ``"auto"``, text mode when the registry says the model
    has no tool calling or the session switched, ``"auto"`` for an unknown or local model, else native.
    """
    setting = config.text_mode_tools
    agent_setting = coerce_text_mode(getattr(getattr(session, "agent", None), "text_mode_tools", None))
    if "on" in (setting, agent_setting):
        return "text"
    if "off" in (setting, agent_setting):
        return "native"
    if getattr(session, "switched_to_text_mode", False):
        return "text"
    info = get_model_info(model_id)
    if info is None or info.provider in _LOCAL_PROVIDERS or provider_name in _LOCAL_PROVIDERS:
        return "text" if info is not None and not info.supports_tools else "auto"
    return "native" if info.supports_tools else "text"


#: Replies in a row whose only calls could not be read that the model is asked again about (then
#: its text is taken as the answer, so a model that cannot write a call can still answer; a reply
#: that still holds nothing but unreadable calls or a made-up result ends the turn with
#: ``UnreadableToolCalls``).
MAX_REREADS = 2


def switch_to_text_mode(session: SessionLike, provider: str, model: str) -> TextModeSwitched:
    """Switch ``session`` to text-mode tool calls for good (auto mode saw ``model`` write a call as
    text); the event that says so, and a log line."""
    session.switched_to_text_mode = True
    _log.info(
        "session %s: %s:%s wrote its tool call as text instead of a native call; the session uses "
        "text-mode tool calls from now on (AgentConfig.text_mode_tools='on' or 'off' decides this)",
        session.session_id, provider, model,
    )
    return TextModeSwitched(provider=provider, model=model)


def describe_tools(tools: list[ToolDefinition]) -> str:
    """The system-prompt section that teaches the model the protocol and lists the tools."""
    lines = [_PROTOCOL]
    for t in tools:
        schema = json.dumps(t.input_schema, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"- {t.name}: {t.description or '(no description)'}\n  arguments schema: {schema}")
    return "\n".join(lines)


def _call_block(call: TextCall) -> ToolUseBlock:
    return ToolUseBlock(
        id=f"text_{new_id()[:20]}", name=call.name, input=call.arguments, parse_error=call.parse_error
    )


def _note(parsed: TextCalls) -> str | None:
    lines: list[str] = []
    if parsed.problems:
        lines.append(_NOTE_PROBLEMS)
        lines.extend(f"- {problem}" for problem in parsed.problems)
        lines.append(_NOTE_HOW)
    if parsed.invented is not None:
        lines.append(_NOTE_INVENTED if parsed.calls else _NOTE_INVENTED_ALONE)
    return "\n".join(lines) or None


class TextRead(NamedTuple):
    """What ``read_text_calls`` made of a reply: the reply with its calls as ``ToolUseBlock``s, the
    note for the model (None: nothing to tell it), and whether nothing in it is usable: no call and
    no answer, only what could not be read or a result the model made up (``problems`` says what)."""

    message: AssistantMessage
    note: str | None
    unusable: bool
    problems: list[str]


def read_text_calls(
    message: AssistantMessage, offered: set[str] | frozenset[str], *, auto: bool = False
) -> TextRead | None:
    """The reply with the calls written in its text turned into ``ToolUseBlock``s, and a note for
    the model saying what could not be read; None when there is nothing to change.

    ``auto``: the model was offered native tools; only a reply with no native calls and at least
    one well-formed call (JSON that needed no repair) to an offered tool is changed, or one with a
    ``<tool_call>`` tag or nothing but call-shaped JSON (a call attempt beyond doubt) that could not
    be read, which is told to the model as in text mode (no call is run and the session does not
    switch for it).
    """
    if message.tool_calls:
        return None  # the model (or a provider shim) made a native call after all
    text = message.text
    if not text:
        return None
    parsed = parse_text_calls(text, offered, cut_off=message.stop_reason == StopReason.MAX_TOKENS)
    calls = parsed.calls
    if auto and not any(c.parse_error is None and not c.repaired for c in calls):
        # Told to the model only when the attempt is beyond doubt: a <tool_call> tag, or a reply that
        # is nothing but call-shaped JSON (a call to a tool that does not exist is no answer either).
        if not parsed.tagged_problems and (parsed.answer or not parsed.problems):
            return None
        return TextRead(message, "\n".join([_NOTE_PROBLEMS, *(f"- {p}" for p in parsed.problems), _NOTE_HOW]),
                        not parsed.answer, parsed.problems)
    if not calls and not parsed.problems and parsed.invented is None:
        return None
    if parsed.invented is not None:
        _log.info("the model wrote a tool result itself; cut off: %.200r", parsed.invented)
    content: list[ContentBlock] = [b for b in message.content if not isinstance(b, TextBlock)]
    content.extend(_call_block(p) if isinstance(p, TextCall) else TextBlock(text=p) for p in parsed.parts)
    update: dict[str, Any] = {"content": content}
    if calls:
        update["stop_reason"] = StopReason.TOOL_USE
    problems = list(parsed.problems)
    if parsed.invented is not None and not calls:
        invented = parsed.invented[:120]
        problems.append(f"a tool result the model wrote itself, without calling a tool: {invented!r}")
    unusable = not calls and not parsed.answer
    return TextRead(message.model_copy(update=update), _note(parsed), unusable, problems)


def _call_text(call: ToolUseBlock) -> str:
    body = json.dumps({"name": call.name, "arguments": call.input}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def _result_text(result: ToolResultBlock, names: dict[str, str]) -> str:
    label = names.get(result.tool_use_id, "tool")
    status = "error" if result.is_error else "ok"
    return f'{RESULT_LABEL} name="{label}" status="{status}">\n{result.text}\n</tool_response>'


def _render(message: Message, names: dict[str, str]) -> Message:
    if isinstance(message, AssistantMessage):
        if not message.tool_calls:
            return message
        parts: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                names[block.id] = block.name
                parts.append(TextBlock(text=_call_text(block)))
            else:
                parts.append(block)
        return message.model_copy(update={"content": parts})
    if isinstance(message.content, str) or not message.tool_results:
        return message
    blocks: list[ContentBlock] = [
        TextBlock(text=_result_text(b, names)) if isinstance(b, ToolResultBlock) else b
        for b in message.content
    ]
    return UserMessage(content=blocks)


def _stops_on_label(model_id: str, stops: list[str]) -> bool:
    # OpenAI's reasoning models refuse a `stop` parameter, and Chat Completions takes at most four.
    info = get_model_info(model_id)
    if info is not None and info.provider == "openai" and info.supports_thinking:
        return False
    return RESULT_LABEL not in stops and len(stops) < 4


def _remind(rendered: list[Message], original: list[Message]) -> None:
    """Small models forget the task once results arrive and answer after the first one: after the
    latest results, restate the task and ask for the next call (the e2e-local suite with a 1.5B model:
    2 of 6 tasks achieved with this and the "small steps" line of the protocol, 1 of 6 without). Once
    the step's work is visibly done (``_visibly_done``) it asks for the answer instead."""
    if not original or not isinstance(original[-1], UserMessage) or not original[-1].tool_results:
        return
    task = next((text for m in reversed(original) if isinstance(m, UserMessage) and not m.tool_results
                 and (text := "".join(b.text for b in m.blocks if isinstance(b, TextBlock)).strip())), None)
    if task is None:
        return
    last = rendered[-1]
    if isinstance(last, UserMessage):  # the results, written out as text by _render
        done = _visibly_done(original, task)
        nudge = _CONTINUE if done is None else _WRAP_UP.format(what=done)
        reminder = TextBlock(text=f"{_CONTINUE_LEAD} {task}\n{nudge}")
        rendered[-1] = UserMessage(content=[*last.blocks, reminder])


def _visibly_done(original: list[Message], task: str) -> str | None:
    """Whether the latest results finish what the task asks, as far as can be seen: every one
    succeeded, and a call wrote a file the task names, or the reply that made them said the task is
    finished. What to say it did (`` (it wrote notes.txt)``), or None."""
    results = original[-1]
    reply = original[-2] if len(original) > 1 else None
    if not isinstance(results, UserMessage) or not isinstance(reply, AssistantMessage):
        return None
    if any(r.is_error for r in results.tool_results) or not reply.tool_calls:
        return None
    for call in reply.tool_calls:
        path = call.input.get("path")
        if call.name in _WRITE_TOOLS and isinstance(path, str) and path.strip():
            name = path.strip().rsplit("/", 1)[-1]
            if name and name in task:
                return f" (it changed {path.strip()}, the file the task names)"
    return "" if _FINISHED.search(reply.text) else None


def text_mode_request(request: LLMRequest, model_id: str = "") -> LLMRequest:
    """``request`` for a model without native tools: tools described in the system prompt, no
    ``tools`` field, the history's tool calls and results written out as text, and a stop sequence
    on the result label."""
    if not request.tools:
        return request
    names: dict[str, str] = {}
    messages = [_render(m, names) for m in request.messages]
    _remind(messages, request.messages)
    section = describe_tools(request.tools)
    system = f"{request.system}\n\n{section}" if request.system else section
    update: dict[str, Any] = {"messages": messages, "system": system, "tools": [], "tool_choice": None}
    if _stops_on_label(model_id, request.stop_sequences):
        update["stop_sequences"] = [*request.stop_sequences, RESULT_LABEL]
    return request.model_copy(update=update)
