"""``Terminal``: one stdin reader routing lines to prompts, confirmations and steering."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator

import anyio
import pytest
from rich.console import Console

from agcore.cli._terminal import Terminal

ANSWERS = {"y": True, "n": False}


@pytest.fixture
def pipe() -> Iterator[tuple[io.TextIOWrapper, int]]:
    """A stdin stand-in with a real file descriptor (the reader's os.read path) and its write end."""
    read_fd, write_fd = os.pipe()
    stream = os.fdopen(read_fd, "r", encoding="utf-8")
    yield stream, write_fd
    stream.close()
    # Closed here only if the test did not (close_write): a second close could hit whatever file
    # reused the number since — the reader thread's own duplicate, say.
    if write_fd not in _closed_by_test:
        os.close(write_fd)
    _closed_by_test.discard(write_fd)


_closed_by_test: set[int] = set()


def close_write(write_fd: int) -> None:
    """End the input (Ctrl-D on a terminal)."""
    os.close(write_fd)
    _closed_by_test.add(write_fd)


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200, color_system=None), out


@pytest.mark.anyio
async def test_lines_typed_ahead_wait_for_the_next_prompt(pipe: tuple[io.TextIOWrapper, int]) -> None:
    stream, write_fd = pipe
    console, out = _console()
    os.write(write_fd, b"first\nsecond\n")
    async with Terminal(console, stream) as terminal:
        with anyio.fail_after(5):
            assert await terminal.read_line("you> ") == "first"
            assert await terminal.read_line("you> ") == "second"
            close_write(write_fd)
            assert await terminal.read_line("you> ") is None  # end of input
    assert out.getvalue().startswith("you> first\nyou> second\n")  # piped answers are echoed


@pytest.mark.anyio
async def test_while_a_turn_runs_lines_steer_unless_a_prompt_waits(
    pipe: tuple[io.TextIOWrapper, int],
) -> None:
    stream, write_fd = pipe
    console, _ = _console()
    steered: list[str] = []
    got_one = anyio.Event()

    def steer(line: str) -> None:
        steered.append(line)
        got_one.set()

    async with Terminal(console, stream) as terminal:
        terminal.on_line = steer
        with anyio.fail_after(5):
            os.write(write_fd, b"use tabs\n")
            await got_one.wait()
            assert steered == ["use tabs"]
            async with anyio.create_task_group() as tg:

                async def answer() -> None:
                    await anyio.sleep(0.05)
                    os.write(write_fd, b"y\n")

                tg.start_soon(answer)
                assert await terminal.ask("Allow?", ANSWERS, False) is True  # the prompt wins over steering
            assert steered == ["use tabs"]


@pytest.mark.anyio
async def test_ask_repeats_until_the_answer_is_known(pipe: tuple[io.TextIOWrapper, int]) -> None:
    stream, write_fd = pipe
    console, out = _console()
    os.write(write_fd, b"maybe\nN\n")
    async with Terminal(console, stream) as terminal:
        with anyio.fail_after(5):
            assert await terminal.ask("Allow?", ANSWERS, True) is False
    assert "Please answer one of: y/n." in out.getvalue()


@pytest.mark.anyio
async def test_end_of_input_answers_with_the_default(pipe: tuple[io.TextIOWrapper, int]) -> None:
    stream, write_fd = pipe
    console, out = _console()
    close_write(write_fd)
    async with Terminal(console, stream) as terminal:
        with anyio.fail_after(5):
            assert await terminal.ask("Allow?", ANSWERS, False) is False
    assert "(no input)" in out.getvalue()


@pytest.mark.anyio
async def test_a_waiting_prompt_is_cancellable(pipe: tuple[io.TextIOWrapper, int]) -> None:
    stream, _ = pipe
    console, _ = _console()
    async with Terminal(console, stream) as terminal:
        with anyio.move_on_after(0.1) as scope:
            await terminal.read_line("you> ")
        assert scope.cancelled_caught
