"""``Workspace.execute(stdin=...)``: the caller's text on a command's standard input (how an acceptance
check reads the model's answer), in the bubblewrap sandbox and guard-only, on asyncio and trio."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agcore.tools.workspace import Workspace
from tests.tools.sandbox_support import require_bwrap, scratch_dir

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["required", "off"])
def workspace(request: pytest.FixtureRequest) -> Iterator[Workspace]:
    if request.param == "required":
        require_bwrap()
    for scratch in scratch_dir():
        (scratch / "ws").mkdir()
        yield Workspace(scratch / "ws", sandbox=request.param, confirm_commands=False)


async def test_the_text_is_the_commands_standard_input(workspace: Workspace) -> None:
    result = await workspace.execute("grep -c port", stdin="host 1\nport 8080\nport 9090\n")
    assert result.exit_code == 0
    assert result.stdout.strip() == "2"


async def test_each_command_of_a_sequence_reads_it_from_the_start(workspace: Workspace) -> None:
    result = await workspace.execute("grep -q alpha && grep -q omega && wc -l", stdin="alpha\nomega\n")
    assert result.exit_code == 0
    assert result.stdout.strip() == "2"


async def test_a_pipelines_first_stage_reads_it_and_the_rest_read_the_pipe(workspace: Workspace) -> None:
    result = await workspace.execute("tr a-z A-Z | grep -c ANSWER", stdin="the answer\nno\nanswer\n")
    assert result.stdout.strip() == "2"


async def test_a_redirection_still_wins_over_the_text(workspace: Workspace) -> None:
    (workspace.root / "in.txt").write_text("from the file\n")
    result = await workspace.execute("cat < in.txt", stdin="from the caller\n")
    assert result.stdout == "from the file\n"


async def test_text_larger_than_a_pipe_buffer_arrives_whole(workspace: Workspace) -> None:
    text = "line of the answer\n" * 20_000  # 380 kB: a pipe without a reader would block at 64 kB
    result = await workspace.execute("wc -c", stdin=text)
    assert result.stdout.strip() == str(len(text.encode()))


async def test_without_text_the_input_is_empty(workspace: Workspace) -> None:
    result = await workspace.execute("wc -c")
    assert result.exit_code == 0
    assert result.stdout.strip() == "0"


async def test_unicode_text_is_sent_as_utf8(workspace: Workspace) -> None:
    result = await workspace.execute("wc -c", stdin="héliotrope ✓")
    assert result.stdout.strip() == str(len("héliotrope ✓".encode()))


async def test_the_result_says_whether_a_command_read_the_text(workspace: Workspace) -> None:
    (workspace.root / "notes.txt").write_text("port 8080\n")
    assert (await workspace.execute("grep -q 8080", stdin="port 8080\n")).read_stdin
    assert (await workspace.execute("true && grep -q 8080", stdin="port 8080\n")).read_stdin
    assert not (await workspace.execute("grep -q 8080 notes.txt", stdin="port 8080\n")).read_stdin
    assert not (await workspace.execute("grep -q 8080 notes.txt")).read_stdin
