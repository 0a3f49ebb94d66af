"""The in-process tool phase (``run_tools``) and the rule every runtime dispatches a batch by
(``run_together``); public through ``agcore.agent.steps``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.agent._tool_steps import ToolSteps
    from agcore.llm.types import ToolUseBlock

__all__ = ["run_together", "run_tools"]


def run_together(read_only: Iterable[bool]) -> bool:
    """Whether the vetted calls of a batch (``read_only`` of each call's tool) may run at once with
    ``AgentConfig.parallel_tool_calls``: not when they mix ``read_only`` calls with calls that may
    change something, which run in the model's order (a 1.5B model read a file and edited it in one
    reply, and the edit ran before the read was done). Every runtime dispatches by this rule."""
    return len(set(read_only)) < 2


async def run_tools(steps: ToolSteps, batch: Batch) -> None:
    """The in-process tool phase: every call of ``batch`` vetted in the model's order, approval asked
    through the session's ``confirm`` callback, server calls run one after another or, with
    ``AgentConfig.parallel_tool_calls``, together in a task group once every call is vetted (unless
    ``run_together`` says no). The caller ends the batch (``end_batch``)."""
    parallel = steps.config.parallel_tool_calls
    runnable: list[tuple[ToolUseBlock, ToolUseBlock]] = []  # (as the model made it, as it runs)
    read_only: list[bool] = []  # of each runnable call's tool
    for call in batch.calls:
        vetting = await steps.vet(batch, call)
        if vetting.action == "confirm":
            vetting = await steps.confirmed(batch, call, vetting, await steps.ask(vetting))
        if vetting.action == "stop":
            break
        if vetting.action != "run":
            continue
        if parallel:
            runnable.append((call, vetting.call))
            read_only.append(vetting.tool is not None and vetting.tool.read_only)
        else:
            await steps.run_call(batch, call, vetting.call)
    if len(runnable) == 1 or not run_together(read_only):
        for original, to_run in runnable:
            await steps.run_call(batch, original, to_run)
    elif runnable:
        async with anyio.create_task_group() as group:
            for original, to_run in runnable:
                group.start_soon(steps.run_call, batch, original, to_run)
