"""Sub-agents: one agent hands a task to another and gets its answer back, as a tool call.

``agent_tool(agent)`` (or ``BasicAgent.as_tool()``) makes an ``Agent`` a ``Tool``: the parent's model
calls it with a ``task``, and the tool runs a child ``AgentSession`` (its own history; by default the
parent's bundle: provider, tools, hooks) for one turn and returns the child's final text. Everything
else rides on the kernel's own seams:

* the tool reaches its parent session through ``ToolContext`` (the session is the ``"session"``
  dependency every loop session hands its tools), so sub-agent calls of one reply run concurrently
  like any other tools, and cancelling the parent's turn cancels them;
* the child's ``HookContext`` says who its parent is (``parent_session_id``, ``parent_call_id``,
  ``depth``, ``root_session_id``): plugins nest its spans and records under the parent's;
* the child's ``CostTracker`` rolls up into its parent's as it spends, and before every model call
  the child checks its ancestors' budgets (``_subagent_links.parent_budget_exceeded``), so a parent's
  ``max_total_tokens``/``max_cost_usd`` stops a child; ``max_depth`` stops recursive delegation;
* the child is saved in the parent's store under ``subagent_session_id(parent_id, call_id)``;
* the child's events reach the parent's stream as ``SubagentEvent``s (``_subagent_links``).

A child's failure, limit or depth refusal is an error result the parent's model reads, never a crash
of the parent's turn; a cancellation propagates (anyio requires it) and leaves both histories valid.
"""

from __future__ import annotations

import json
import logging
import re
import weakref
from collections.abc import Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio

from agcore._clock import new_id
from agcore.agent import _events as ev
from agcore.agent._batch import answer_open_calls
from agcore.agent._result import LimitExceeded
from agcore.agent.output._output import StructuredOutput, resolve_output
from agcore.agent.subagents._subagent_links import report_subagent_event
from agcore.llm.types import UserMessage
from agcore.tools import VENDOR_TOOL_NAME, Tool, ToolContext, ToolError

if TYPE_CHECKING:
    from agcore.agent._agent_protocol import Agent
    from agcore.agent._bundle import RuntimeBundle
    from agcore.agent._session import AgentSession
    from agcore.agent._turn import TurnResult

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_SUBAGENT_TIMEOUT",
    "SUBAGENT_STATE_KEY",
    "agent_tool",
    "run_subagent",
    "subagent_of",
    "subagent_session_id",
]

#: How many sub-agents deep delegation may go by default (1: a sub-agent may not delegate further).
DEFAULT_MAX_DEPTH: Final = 3
#: Seconds a sub-agent's turn may take by default before its tool call times out (and the turn is
#: cancelled); a sub-agent runs a whole turn, far longer than the usual tool.
DEFAULT_SUBAGENT_TIMEOUT: Final = 600.0
#: Where a child session's ``app_state`` says whose child it is (saved with it).
SUBAGENT_STATE_KEY: Final = "subagent"

_log = logging.getLogger("agcore.agent")

# The dependencies a session makes for itself; a child gets its own, not its parent's.
_OWN_DEPENDENCIES: Final = frozenset({"session", "memory_store", "retriever"})

_TASK_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": (
                "The task, complete and self-contained: the sub-agent does not see this "
                "conversation, only what you write here."
            ),
        },
    },
    "required": ["task"],
}

def subagent_session_id(parent_session_id: str, call_id: str) -> str:
    """The id a child session is saved under: derived from its parent's id and the parent's tool call
    (a plan step's delegation uses ``step-<id>-<attempt>``), so the parent can find its children."""
    return f"{parent_session_id}/sub/{call_id}"


@dataclass(frozen=True, slots=True)
class _Spec:
    agent: Agent
    bundle: RuntimeBundle | None
    max_turns: int | None
    max_depth: int


_specs: weakref.WeakKeyDictionary[Tool, _Spec] = weakref.WeakKeyDictionary()


def subagent_of(tool: Tool) -> tuple[Agent, RuntimeBundle | None] | None:
    """The agent (and its own bundle, None for the parent's) behind a tool ``agent_tool`` made; None
    for any other tool."""
    spec = _specs.get(tool)
    return None if spec is None else (spec.agent, spec.bundle)


def _with_config(base: RuntimeBundle, max_turns: int | None) -> RuntimeBundle:
    """``base`` itself, or (for its own ``max_turns``) a bundle sharing every part of ``base`` but the
    config: the parent's bundle is never changed."""
    if max_turns is None:
        return base
    from dependency_injector import providers

    from agcore.agent._bundle import RuntimeBundle

    derived = RuntimeBundle()
    derived.config.override(providers.Object(base.config().replace(max_turns=max_turns)))
    for part in ("provider", "provider_resolver", "memory_store", "retriever", "tool_registry",
                 "hook_executor"):
        getattr(derived, part).override(providers.Object(getattr(base, part)()))
    return derived


async def run_subagent(
    parent: AgentSession | None,
    agent: Agent,
    task: str,
    *,
    bundle: RuntimeBundle | None = None,
    call_id: str | None = None,
    max_turns: int | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    dependencies: Mapping[str, Any] | None = None,
    tool_name: str | None = None,
    report_events: bool = True,
    output_type: Any = None,
) -> AgentSession:
    """Run ``task`` as one turn of a new child session of ``parent`` (None: a session of its own) and
    return the child, closed; ``child.last_result`` is how its turn ended (limits and errors are
    returned there, as for any turn).

    The child runs ``agent`` with ``bundle`` (None: the parent's), ``max_turns`` model calls at most
    (None: the bundle's setting), the parent's confirmation callback and tool dependencies (plus
    ``dependencies``), and is saved in the parent's store as ``subagent_session_id(parent id,
    call_id)``. Its usage rolls up into the parent's, whose budgets it respects. Raises
    ``LimitExceeded("max_depth")`` when the child would be deeper than ``max_depth``. With
    ``report_events`` its events reach the parent's stream as ``SubagentEvent``s when the parent's
    tool batch ends (call it from a tool; elsewhere pass False).

    The child's turn is typed like a top-level turn: by ``output_type`` (a type or a
    ``StructuredOutput``) if given, else by the agent's own ``output_type``; its validated answer is
    ``child.last_result.output``."""
    from agcore.agent._loop import run_loop
    from agcore.agent._session import AgentSession

    output = resolve_output(output_type, agent)
    depth = 1 if parent is None else parent.depth + 1
    if depth > max_depth:
        raise LimitExceeded(
            "max_depth",
            f"Not run: the sub-agent '{agent.name}' would run {depth} levels deep, past the limit of "
            f"{max_depth} nested sub-agents (max_depth). Do this part of the task yourself, with "
            "your own tools.",
            value=max_depth,
        )
    base = bundle if bundle is not None else parent.bundle if parent is not None else None
    if base is None:
        raise ToolError(
            f"The sub-agent '{agent.name}' has no runtime: give agent_tool(..., bundle=...) a bundle, or "
            "call it from an AgentSession, whose bundle it then shares."
        )
    call = call_id or new_id()
    deps: dict[str, Any] = {}
    if parent is not None:
        inherited = parent.tool_context.dependencies
        deps.update({k: v for k, v in inherited.items() if k not in _OWN_DEPENDENCIES})
    deps.update(dependencies or {})
    child = AgentSession(
        agent,
        subagent_session_id(parent.session_id, call) if parent is not None else new_id(),
        _with_config(base, max_turns),
        confirm=parent.confirm if parent is not None else None,
        dependencies=deps,
        store=parent.store if parent is not None else None,
    )
    if parent is not None:
        child.parent, child.parent_call_id, child.depth = parent, call, depth
        child.usage.roll_up_into(parent.usage)
    child.app_state[SUBAGENT_STATE_KEY] = {
        "parent_session_id": parent.session_id if parent is not None else None,
        "call_id": call, "tool": tool_name, "depth": depth,
    }
    try:
        events = run_loop(child, new_input=UserMessage(content=task), reads_deltas=False, output=output)
        async with aclosing(events) as stream:
            async for event in stream:
                if report_events and parent is not None:
                    _report(parent, child, call, event)
        result = child.last_result
        if result is not None and result.stop == "client_tools":
            await _settle_client_calls(child)
    finally:
        # Shielded: a cancelled or timed-out child still has its repaired history saved (every call
        # answered) and its observers' spans and logs closed.
        with anyio.CancelScope(shield=True):
            await _save_quietly(child)
            await child.close()
    return child


async def _save_quietly(child: AgentSession) -> None:
    # Runs while an error or cancellation may be propagating: a store failure is logged, not raised
    # over it (the history is repaired again when the child is loaded).
    if child.store is None:
        return
    try:
        await child.save()
    except Exception as exc:
        _log.warning("sub-agent session %s: could not save: %s", child.session_id, exc)


def _report(parent: AgentSession, child: AgentSession, call_id: str, event: ev.AgentEvent) -> None:
    if isinstance(event, ev.TextDelta | ev.ThinkingDelta):
        return
    if not isinstance(event, ev.SubagentEvent):  # a grandchild's events are already wrapped
        # model_construct: every field is already valid (the inner event was built by the loop).
        event = ev.SubagentEvent.model_construct(
            call_id=call_id, agent=child.agent.name, session_id=child.session_id, depth=child.depth,
            event=event,
        )
    report_subagent_event(parent, event)


async def _settle_client_calls(child: AgentSession) -> None:
    """A sub-agent cannot pause for client tools (nobody would resume it): answer its pending calls so
    its history stays valid, and save it."""
    turn = child.state.turn
    names = ", ".join(c.name for c in child.pending_client_calls)
    answer_open_calls(
        child.messages,
        f"Not run: a sub-agent cannot run client tools ({names}); the turn ended here.",
        turn.batch if turn is not None else None,
    )
    child.state.turn = None
    if child.store is not None:
        await child.save()


def _tool_answer(
    name: str, result: TurnResult | None, output: StructuredOutput | None = None,
    max_turns: int | None = None,
) -> str:
    """The tool result for a finished child turn (a typed child's: its typed answer as JSON); a failed
    one raises ``ToolError`` with the reason."""
    if result is None:  # pragma: no cover - run_loop always leaves a result
        raise ToolError(f"The sub-agent '{name}' ended without a result.", tool_name=name)
    if result.stop == "done" and result.error is None:
        if output is not None and not output.is_text and result.output is not None:
            return json.dumps(output.dump(result.output), ensure_ascii=False)
        return result.text or f"(the sub-agent '{name}' finished without a text answer)"
    if result.stop == "client_tools":
        reason = "it called client tools, which a sub-agent cannot run"
    elif isinstance(result.error, LimitExceeded) and result.error.limit == "max_turns":
        # Not the library's "raise AgentConfig.max_turns": the limit is the sub-agent's own.
        allowed = max_turns if max_turns is not None else result.error.value
        where = (f"agent_tool(max_turns={max_turns})" if max_turns is not None
                 else "its runtime's AgentConfig.max_turns; agent_tool(max_turns=...) sets its own")
        reason = f"it used all {allowed} model calls it may make ({where})"
    elif result.error is not None:
        reason = str(result.error)
    else:
        reason = f"its turn ended with {result.stop!r}"
    partial = f" What it said before stopping: {result.text}" if result.text else ""
    raise ToolError(
        f"The sub-agent '{name}' did not finish: {reason}{partial} Decide whether to retry with a "
        "narrower task, or go on without it.",
        tool_name=name,
    )


def agent_tool(
    agent: Agent,
    bundle: RuntimeBundle | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    max_turns: int | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
    timeout: float | None = DEFAULT_SUBAGENT_TIMEOUT,
    requires_confirmation: bool = False,
    dependencies: Mapping[str, Any] | None = None,
    answer: Callable[[TurnResult], Any] | None = None,
) -> Tool:
    """A ``Tool`` that hands a ``task`` to ``agent`` and returns its final answer.

    Each call runs a child ``AgentSession`` of the calling session (``run_subagent``): its own history,
    ``bundle`` (None: the parent's provider, tools and hooks), at most ``max_turns`` model calls (None:
    the bundle's ``max_turns``), ``timeout`` seconds (None: the parent's ``tool_timeout``), and no
    deeper than ``max_depth`` sub-agents. ``name`` defaults to the agent's name and ``description`` to
    one that says what the agent is; both are what the parent's model reads. A child that fails, hits
    a limit, or would be too deep is an error result the parent's model reads.

    ``answer(result)`` picks what the parent's model reads from a child turn that ended ``done``
    (default: its final text; for an agent with an ``output_type``, whose child turn is typed like a
    top-level turn, its validated answer as JSON); it may return text, content blocks, a pydantic
    model or JSON-able data, converted like any tool's return value (e.g. ``result.output``, or the
    text plus the child's cost).

    Raises ``ValueError`` for ``max_turns`` or ``max_depth`` below 1, and for an agent name that
    Anthropic and OpenAI refuse as a tool name (spaces, dots...) unless ``name`` is given.
    """
    tool_name = name or agent.name
    if name is None and VENDOR_TOOL_NAME.fullmatch(tool_name) is None:
        suggested = re.sub(r"[^a-zA-Z0-9_-]+", "_", agent.name).strip("_")[:64] or "subagent"
        raise ValueError(
            f"agent_tool: the agent's name {agent.name!r} cannot be a tool name (Anthropic and OpenAI "
            f"take only letters, digits, '_' and '-', at most 64): pass name=, e.g. "
            f"agent_tool(agent, name={suggested!r})"
        )
    if max_turns is not None and (isinstance(max_turns, bool) or max_turns < 1):
        raise ValueError(
            f"agent_tool {tool_name!r}: max_turns must be 1 or more model calls (or None for the "
            f"runtime's AgentConfig.max_turns), not {max_turns!r}"
        )
    if isinstance(max_depth, bool) or max_depth < 1:
        raise ValueError(
            f"agent_tool {tool_name!r}: max_depth must be 1 or more nested sub-agents (1: this "
            f"sub-agent may not delegate further), not {max_depth!r}"
        )
    about = description or (
        f"Hand a self-contained task to the '{agent.name}' agent, which works on it with its own tools "
        "and context and answers with its result."
    )

    async def delegate(arguments: dict[str, Any], ctx: ToolContext) -> Any:
        task = arguments.get("task")
        if not isinstance(task, str) or not task.strip():
            raise ToolError(
                f"'{tool_name}' needs the task as a non-empty string argument `task`.", tool_name=tool_name
            )
        from agcore.agent._session import AgentSession

        session = ctx.get("session")
        parent = session if isinstance(session, AgentSession) else None
        try:
            child = await run_subagent(
                parent, agent, task, bundle=bundle, call_id=ctx.tool_call_id or None,
                max_turns=max_turns, max_depth=max_depth, dependencies=dependencies, tool_name=tool_name,
            )
        except LimitExceeded as exc:  # the depth limit: the call is refused before the child exists
            raise ToolError(str(exc), tool_name=tool_name) from exc
        output = resolve_output(None, agent)  # what run_subagent typed the child's turn by
        text = _tool_answer(agent.name, child.last_result, output, max_turns)
        if answer is not None and child.last_result is not None:
            return answer(child.last_result)
        return text

    made = Tool.from_handler(
        tool_name, about, _TASK_SCHEMA, delegate, timeout=timeout,
        requires_confirmation=requires_confirmation,
    )
    _specs[made] = _Spec(agent, bundle, max_turns, max_depth)
    return made
