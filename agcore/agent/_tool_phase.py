"""The in-process runtime's tool phase: every call of a batch vetted in the model's order
(``TurnSteps.vet``), approval asked through the session's ``confirm`` callback, server calls run one
after another or, with ``AgentConfig.parallel_tool_calls``, together in an anyio task group once every
call has been vetted. The batch is ended by the caller (``TurnSteps.end_batch``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.agent.steps import TurnSteps
    from agcore.llm.types import ToolUseBlock

__all__ = ["run_tools"]


async def run_tools(steps: TurnSteps, batch: Batch) -> None:
    """Give every call of ``batch`` its result (client calls: set aside in ``batch.client_calls``)."""
    parallel = steps.config.parallel_tool_calls
    runnable: list[tuple[ToolUseBlock, ToolUseBlock]] = []  # (as the model made it, as it runs)
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
        else:
            await steps.run_call(batch, call, vetting.call)
    if len(runnable) == 1:
        await steps.run_call(batch, *runnable[0])
    elif runnable:
        async with anyio.create_task_group() as group:
            for original, to_run in runnable:
                group.start_soon(steps.run_call, batch, original, to_run)
