"""``LoggingPlugin`` on real runs: one readable line per event, at the level its outcome deserves."""

from __future__ import annotations

import logging
import re

import anyio
import pytest

from agcore.agent import AgentConfig
from agcore.llm import OverloadedError
from agcore.plugins import LoggingPlugin
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool

from ._support import DenyD, mixed_batch, session_with

pytestmark = pytest.mark.anyio


def lines(caplog: pytest.LogCaptureFixture, logger: str = "agcore.run") -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == logger]


async def test_a_turn_is_logged_line_by_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agcore.run")
    session = session_with(ScriptedProvider([mixed_batch(), "All done."]), LoggingPlugin(), DenyD(),
                           session_id="abcdef0123456789")
    await session.submit_turn("please   do\nthings")
    logged = lines(caplog)
    prefix = "[auditor abcdef01:1] "
    assert all(message.startswith(prefix) for _, message in logged)
    text = [(level, message.removeprefix(prefix)) for level, message in logged]
    assert text[0] == ("INFO", "turn started: 'please do things'")
    assert text[1] == ("INFO", "model call: 1 messages, 5 tools, max_tokens=None")
    assert re.fullmatch(
        r"model reply from scripted-model: stop=tool_use, tokens in=\d+ out=\d+, 6 tool call\(s\), "
        r"22 chars of text", text[2][1])
    assert text[3:5] == [("INFO", "confirmation for delete (yes): yes"),
                         ("INFO", "confirmation for delete (no): no")]
    tools = text[5:11]
    assert re.fullmatch(r'tool add\(\{"a":1,"b":2\}\) -> ok in \d+\.\d{3}s', tools[0][1])
    assert tools[0][0] == "INFO"
    assert tools[1][0] == "WARNING"
    assert tools[1][1].startswith("tool boom({}) -> error in ")
    assert "disk on fire" in tools[1][1]
    # refusals are the run working as intended: INFO, with the reason
    assert tools[2][0] == "INFO"
    assert "-> denied" in tools[2][1]
    assert "not on Sundays" in tools[2][1]
    assert tools[4][0] == "INFO"
    assert tools[4][1].startswith('tool delete({"path":"b"}) -> not_approved')
    assert text[-1][0] == "INFO"
    assert re.fullmatch(r"turn ended \(done\) after 2 model call\(s\), \d+ tokens", text[-1][1])
    assert len(text) == 14  # start, 2 x (request, reply), 2 confirmations, 6 calls, end
    record = next(r for r in caplog.records if r.name == "agcore.run")
    assert (record.agcore_session, record.agcore_turn, record.agcore_event) == (  # type: ignore[attr-defined]
        "abcdef0123456789", 1, "turn_start")


async def test_errors_and_abnormal_ends_are_warnings_or_errors(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agcore.run")
    failing = session_with(ScriptedProvider([OverloadedError("busy", status_code=529)]), LoggingPlugin())
    await failing.submit_turn("hi")
    limited = session_with(ScriptedProvider([tool_call_reply("add", {"a": 1, "b": 1})]), LoggingPlugin(),
                           session_id="s-2", config=AgentConfig(max_turns=1))
    await limited.submit_turn("1+1")
    logged = lines(caplog)
    assert ("ERROR", "[auditor s-1:1] error: AgentLLMError: The model call failed: "
            "[scripted:scripted-model] busy (HTTP 529). It is transient: run the turn again later (the "
            "session history is intact).") in logged
    assert any(level == "ERROR" and "turn ended (error)" in m for level, m in logged)
    ended = [(level, m) for level, m in logged if "s-2" in m and "turn ended" in m]
    assert ended[0][0] == "WARNING"
    assert "(limit)" in ended[0][1]
    assert "LimitExceeded" in ended[0][1]


async def test_a_cancelled_turn_is_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agcore.run")
    started = anyio.Event()

    @tool
    async def hang() -> str:
        """Never returns."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    session = session_with(ScriptedProvider([tool_call_reply("hang", {})]), LoggingPlugin(), tools=(hang,))
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.submit_turn, "go")
        await started.wait()
        tg.cancel_scope.cancel()
    assert lines(caplog)[-1][0] == "WARNING"
    assert "turn ended (cancelled)" in lines(caplog)[-1][1]


async def test_logger_object_and_level_are_honoured(caplog: pytest.LogCaptureFixture) -> None:
    mine = logging.getLogger("myapp.agent")
    caplog.set_level(logging.DEBUG, logger="myapp.agent")
    session = session_with(ScriptedProvider(["hello"]), LoggingPlugin(mine, level=logging.DEBUG))
    await session.submit_turn("hi")
    logged = lines(caplog, "myapp.agent")
    assert [level for level, _ in logged] == ["DEBUG"] * 4
    caplog.clear()
    caplog.set_level(logging.INFO, logger="myapp.agent")
    quiet = session_with(ScriptedProvider(["hello"]), LoggingPlugin(mine, level=logging.DEBUG))
    await quiet.submit_turn("hi")
    assert lines(caplog, "myapp.agent") == []  # below the logger's level: nothing formatted or emitted
