"""A graph run in an asyncio task of its own, so that leaving it cancels the graph exactly once.

LangGraph unwinds a cancelled run in a clean-up task (``AsyncPregelLoop.__aexit__`` awaits an exit
task, and that exit cancels the nodes still running). Under an anyio cancel scope, cancellation is
level-triggered: anyio cancels the waiting task again on every turn of the event loop, and one of
those cancels lands on LangGraph's exit task before it reaches the nodes. The nodes then ran on: a
model call or a command the user had cancelled (Ctrl-C in ``agcore chat``) went on to its end, and
its late steps broke the next turn ("a turn's steps run only inside a turn"). Seen whenever the run
was waiting on more than one task (a streamed run, a parallel batch).

So the graph runs in a task outside any cancel scope; the caller waits for it. When the caller is
cancelled or leaves the stream, the task is cancelled once and awaited, shielded, until LangGraph has
unwound (its nodes cancelled, their writes settled). LangGraph runs on asyncio only (GraphSession
checks), which is why this module uses asyncio's tasks directly.
"""

from __future__ import annotations

import asyncio  # noqa: TID251 (LangGraph runs on asyncio only; see the docstring)
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable
from contextlib import aclosing
from typing import Any, TypeVar

import anyio

__all__ = ["interrupts_of_run", "run_in_own_task", "stream_in_own_task"]

T = TypeVar("T")

_END = object()


async def run_in_own_task(work: Awaitable[T]) -> T:
    """``await work`` in a task of its own; a cancelled caller cancels it once and waits for it."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except BaseException:
        await _cancel_and_wait(task)
        raise


async def interrupts_of_run(graph: Any, payload: Any, config: Any, durability: Any) -> Any:
    """Run ``graph`` to its end or an interrupt, in a task of its own; the interrupts it stopped at.
    ("updates": the nodes' own updates, so no step reads the whole state back out, as ``ainvoke``'s
    "values" does each step.)"""

    async def run() -> Any:
        interrupts: Any = None
        run = graph.astream(payload, config, stream_mode="updates", durability=durability)
        async with aclosing(run) as chunks:
            async for chunk in chunks:
                if "__interrupt__" in chunk:
                    interrupts = chunk["__interrupt__"]
        return interrupts

    return await run_in_own_task(run())


def stream_in_own_task(chunks: AsyncIterator[T]) -> AsyncGenerator[T, None]:
    """``chunks`` read in a task of its own, one at a time: the task waits until the caller has taken
    each chunk and asked for the next, so the graph goes on in step with the caller, as iterating it
    directly would. Leaving early (``break``, cancellation) cancels the task once and waits for it."""
    return _relay(chunks)


async def _relay(chunks: AsyncIterator[T]) -> AsyncGenerator[T, None]:
    queue: asyncio.Queue[tuple[Any, BaseException | None]] = asyncio.Queue(maxsize=1)
    task = asyncio.ensure_future(_pump(chunks, queue))
    try:
        while True:
            item, error = await queue.get()
            if error is not None:
                raise error
            if item is _END:
                return
            try:
                yield item
            finally:
                queue.task_done()
    finally:
        await _cancel_and_wait(task)


async def _pump(chunks: AsyncIterator[T], queue: asyncio.Queue[tuple[Any, BaseException | None]]) -> None:
    """Hand each chunk over and wait until it was taken; then the end, or the error that ended it."""
    try:
        async with aclosing(chunks) as reading:  # type: ignore[type-var]
            async for chunk in reading:
                await queue.put((chunk, None))
                await queue.join()
    except asyncio.CancelledError:
        raise  # the caller left: nobody reads the queue any more
    except BaseException as error:
        queue.put_nowait((None, error))
        return
    queue.put_nowait((_END, None))


async def _cancel_and_wait(task: asyncio.Future[Any]) -> None:
    if not task.done():
        task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: the caller raises what it has, asyncio need not report it
