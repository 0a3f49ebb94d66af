"""Drafting a plan with the model: the planning prompt (``DEFAULT_PLAN_PROMPT``, the tools and the
sub-agents a step may use) and the one planning call, made through the session's provider and
``on_llm_request``/``on_llm_response`` hooks, counted in its usage but kept out of its history; a plan
that cannot be read is asked for once more, with the parse error (``draft_with_reask``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from agcore.agent._bundle import bundle_resolve_provider
from agcore.agent._errors import AgentError, PlanParseError
from agcore.agent.plans._plan import Plan
from agcore.agent.plans._plan_parser import PLAN_SHAPE, PlanParser
from agcore.llm.types import AssistantMessage, LLMRequest, ToolDefinition, UserMessage
from agcore.tools import Tool

if TYPE_CHECKING:
    from agcore.agent._agent_protocol import Agent
    from agcore.agent.session_like import SessionLike

__all__ = [
    "DEFAULT_PLAN_PROMPT", "DEFAULT_REASK_PROMPT", "PlanPromptBuilder", "ask_for_plan", "draft_with_reask",
    "plan_prompt",
]

_log = logging.getLogger("agcore.agent")

#: A planning prompt built from the goal and the tools the steps may use.
PlanPromptBuilder = Callable[[str, Sequence[ToolDefinition]], str]

#: ``{goal}``, ``{tools}`` and ``{shape}`` are replaced literally (other braces are left alone).
DEFAULT_PLAN_PROMPT = """\
Break this goal into a short plan of concrete steps; each step is carried out in one turn, with the \
results of the earlier steps at hand.

Goal: {goal}

Tools the steps can use:
{tools}

Answer with only a JSON object, no other text, of this shape:
{shape}
`depends_on` lists the ids of the steps whose results a step needs (only ids of steps in this plan); \
`tool_hints` names the tools that will likely help. Code a step writes goes in its description. Use as \
few steps as the goal needs."""

#: ``{error}`` is the parse error's message.
DEFAULT_REASK_PROMPT = """\
Your plan could not be read: {error}
Answer again with only the JSON object."""


def plan_prompt(
    template: str | PlanPromptBuilder, goal: str, tools: Sequence[ToolDefinition],
    subagents: Mapping[str, Agent | Tool],
) -> str:
    """The planning prompt: ``template`` filled in (or called) with the goal and the tools."""
    if callable(template):
        return template(goal, tools)
    listed = "\n".join(f"- {t.name}: {t.description.splitlines()[0] if t.description else ''}"
                       for t in tools) or "(none: the steps can only think and write)"
    prompt = template.replace("{goal}", goal).replace("{tools}", listed)
    return prompt.replace("{shape}", PLAN_SHAPE) + _subagents_prompt(subagents)


def _subagents_prompt(subagents: Mapping[str, Agent | Tool]) -> str:
    """What the planning prompt says about ``subagents`` (nothing when there are none)."""
    if not subagents:
        return ""
    lines = []
    for name, chosen in subagents.items():
        about = chosen.description if isinstance(chosen, Tool) else (chosen.system_prompt or "").strip()
        lines.append(f"- {name}: {about.splitlines()[0] if about else 'a sub-agent'}")
    return (
        '\n\nA step may be handed to one of these sub-agents by adding "agent": "<name>" to it; '
        "it then works on the step alone, with its own tools:\n" + "\n".join(lines)
    )


async def ask_for_plan(
    session: SessionLike, messages: list[UserMessage | AssistantMessage], system: str | None
) -> AssistantMessage:
    """One planning call through the session's provider and request hooks, counted in its usage."""
    config = session.bundle.config()
    request = LLMRequest.build(
        messages, system=system or session.agent.system_prompt,
        max_tokens=config.max_tokens, temperature=config.temperature,
    )
    hooks = session.bundle.hook_executor()
    try:
        provider = await bundle_resolve_provider(session.bundle, session, request)
        if hooks.has_impls("on_llm_request"):
            ctx = session.hook_context().replace(model=provider.model_id, provider=provider.provider_name)
            request = await hooks.on_llm_request(ctx, request)
        response = await provider.complete(request)
    except Exception as exc:
        raise AgentError.wrap(exc) from exc
    session.usage.add(response.message)
    if hooks.has_impls("on_llm_response"):
        await hooks.on_llm_response(session.hook_context(), response.message)
    return response.message



async def draft_with_reask(
    session: SessionLike, goal: str, prompt: str, parser: PlanParser, *, reask_prompt: str,
    system: str | None, first_reply: AssistantMessage | None = None,
) -> Plan:
    """The plan the model answers ``prompt`` with (``first_reply``, when the answer was had another
    way, e.g. by exploring first); asked once more with the parse error if it cannot be read. What
    the parser mended is logged as warnings. Raises the second ``PlanParseError``."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content=prompt)]
    reply = first_reply or await ask_for_plan(session, messages, system)
    try:
        return _warned(await parser.parse(reply.text, goal))
    except PlanParseError as first:
        messages += [reply, UserMessage(content=reask_prompt.replace("{error}", first.message))]
    reply = await ask_for_plan(session, messages, system)
    try:
        return _warned(await parser.parse(reply.text, goal))
    except PlanParseError as second:
        problem = second.problem or second.message
        raise PlanParseError(
            f"The model's plan could not be read, even when asked again: {problem}",
            raw=second.raw, cause=second, problem=problem,
        ) from None


def _warned(plan: Plan) -> Plan:
    for warning in plan.warnings:
        _log.warning("the model's plan was mended: %s", warning)
    return plan
