"""`make demo`, the durable part: a plan on Temporal survives a worker killed in the middle of a step.

What runs, all of it real machinery:

* a local Temporal dev server (the ``temporal`` binary the ``temporal`` extra installs);
* worker A, an ``agcore worker`` subprocess serving this file's ``make_bundle``;
* a 4-step plan started as a workflow (``start_plan``); while step 2's slow ``build`` tool runs on
  worker A, the demo SIGKILLs it; worker B, a second ``agcore worker`` subprocess, finishes the plan;
* every model and tool call the workers make is logged with the worker's pid, so the demo shows that
  each ran once: the completed steps were not redone, the killed call was not run again (it is not
  idempotent) and the model was told it was interrupted.

The model is a deterministic function of the conversation (``agcore.testing.FunctionProvider``), so the
demo is offline. It exits 1 if any call ran twice or the plan did not finish.

    python examples/durable_demo.py
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from agcore.agent import AgentBuilder, Plan, RuntimeBundle
from agcore.llm import Message, TextBlock, ToolDefinition, ToolResultBlock, UserMessage
from agcore.testing import FunctionProvider, text_reply, tool_call_reply
from agcore.tools import tool

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CALL_LOG = "AGCORE_DEMO_CALL_LOG"
STEPS = {
    "Write the release notes.": ("write_file", {"name": "NOTES.md", "text": "v1.0: durable plans"}),
    "Build the package (slow).": ("build", {"seconds": 30}),
    "Write the changelog.": ("write_file", {"name": "CHANGELOG.md", "text": "1.0: first release"}),
    "Tag the release.": ("write_file", {"name": "TAG", "text": "v1.0"}),
}


def _log(kind: str, name: str) -> None:
    with Path(os.environ[CALL_LOG]).open("a") as log:
        log.write(json.dumps({"pid": os.getpid(), "kind": kind, "name": name}) + "\n")


def model(messages: list[Message], tools: list[ToolDefinition]) -> Any:
    """Each step's turn: call the step's tool, then report its result."""
    last = messages[-1]
    assert isinstance(last, UserMessage)
    results = [b for b in last.content if isinstance(b, ToolResultBlock)] if isinstance(
        last.content, list) else []
    text = last.content if isinstance(last.content, str) else " ".join(
        b.text for b in last.content if isinstance(b, TextBlock))
    if results:
        _log("model", f"report '{results[0].text[:40]}'")
        return text_reply("Done: " + results[0].text)
    step = next(line for line in text.splitlines() if line.startswith("Now carry out step"))
    name, arguments = STEPS[step.split(": ", 1)[1]]
    _log("model", f"call {name} {arguments.get('name', '')}".rstrip())
    return tool_call_reply(name, arguments)


@tool
async def write_file(name: str, text: str) -> str:
    """Write a file in the release directory."""
    _log("tool", f"write_file {name}")
    await anyio.Path(os.environ[CALL_LOG]).with_name(name).write_text(text)
    return f"wrote {name}"


@tool
async def build(seconds: float) -> str:
    """Build the package (takes a while; not safe to run twice)."""
    _log("tool", "build")
    await anyio.sleep(seconds)
    _log("tool", "build finished")
    return "built"


def make_bundle() -> RuntimeBundle:
    """The workers' bundle (``agcore worker examples.durable_demo:make_bundle``)."""
    return AgentBuilder().provider(FunctionProvider(model)).tools(write_file, build).build()


async def start_worker(address: str, task_queue: str, env: dict[str, str]) -> Process:
    process = await anyio.open_process(
        [sys.executable, "-m", "agcore.cli", "worker", "examples.durable_demo:make_bundle",
         "--address", address, "--task-queue", task_queue],
        cwd=ROOT, env=env, stderr=None,
    )
    assert process.stdout is not None
    said = b""
    async for chunk in process.stdout:
        said += chunk
        if b"worker ready" in said:
            break
    return process


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def main() -> int:
    from temporalio.testing import WorkflowEnvironment

    from agcore.integrations.temporal import (
        DATA_CONVERTER,
        DEV_SERVER_ARGS,
        ActivityOptions,
        PlanWorkflow,
        start_plan,
    )

    workdir = Path(tempfile.mkdtemp(prefix="agcore-durable-"))
    log = workdir / "calls.jsonl"
    env = {**os.environ, CALL_LOG: str(log), "PYTHONPATH": str(ROOT)}
    print("durable demo: a 4-step plan on Temporal (local dev server; the model is a scripted function)")
    server = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(Path(sys.executable).parent / "temporal"),
        data_converter=DATA_CONVERTER, dev_server_extra_args=["--log-level", "error", *DEV_SERVER_ARGS],
    )
    address = server.client.service_client.config.target_host
    workers: list[Process] = []
    try:
        workers.append(await start_worker(address, "demo", env))
        print(f"  worker A (pid {workers[0].pid}) serves task queue 'demo'")
        plan = Plan.from_dict({"goal": "Release v1.0", "steps": list(STEPS)})
        handle = await start_plan(server.client, plan, workflow_id="release-v1", task_queue="demo",
                                  options=ActivityOptions(tool_heartbeat_timeout=2.0))
        print(f"  plan started as workflow {handle.id}")
        with anyio.fail_after(60):
            while not any(c["name"] == "build" for c in calls(log)):  # noqa: ASYNC110 - another process
                await anyio.sleep(0.05)
        status = await handle.query(PlanWorkflow.status)
        states = ", ".join(f"{s.id} {s.status.value}" for s in status.steps)
        print(f"  step 2 is building on worker A: {states}")
        workers[0].send_signal(signal.SIGKILL)
        await workers[0].wait()
        print(f"  SIGKILL worker A (pid {workers[0].pid}) in the middle of the build")
        workers.append(await start_worker(address, "demo", env))
        print(f"  worker B (pid {workers[1].pid}) takes over")
        with anyio.fail_after(90):
            done = await handle.result()
    finally:
        for process in workers:
            if process.returncode is None:
                process.kill()
                await process.wait()
        await server.shutdown()
    names = {workers[0].pid: "A", workers[1].pid: "B"} if len(workers) > 1 else {}
    print("\n  each call, the worker that made it:")
    made = calls(log)
    for call in made:
        print(f"    worker {names.get(call['pid'], '?')}  {call['kind']:5}  {call['name']}")
    print("\n  the plan:")
    for step in done.steps:
        print(f"    {step.id} {step.status.value:9} {step.result}")
    twice = [key for key, n in Counter((c["kind"], c["name"]) for c in made).items() if n > 1]
    problems = []
    if not done.succeeded:
        problems.append("the plan did not finish")
    if twice:
        problems.append(f"calls made twice: {twice}")
    if any(c["name"] == "build finished" for c in made):
        problems.append("the killed build ran again")
    files = sorted([p.name async for p in anyio.Path(workdir).iterdir() if p.name != "calls.jsonl"])
    print(f"\n  files written: {', '.join(files)}")
    if problems:
        print("PROBLEMS: " + "; ".join(problems))
        return 1
    print("  every model and tool call ran once: nothing completed before the kill was redone, and the "
          "interrupted build was reported to the model instead of being run twice")
    return 0


if __name__ == "__main__":
    status = anyio.run(main)
    # The Temporal client's native threads can crash a normal interpreter shutdown
    # (temporalio/sdk-python#300): flush and leave.
    sys.stdout.flush()
    os._exit(status)
