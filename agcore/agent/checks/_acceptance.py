"""``AcceptanceChecks``: work that is checked, not claimed (aider's ``--test-cmd``/``--auto-test``).

When the model answers without calls (``before_finish``), each check command runs in the workspace's
command sandbox (``Workspace.execute``: the guard, bubblewrap, the timeout and the output caps of
``run_command``), with the answer's text on its standard input: ``grep -qi 'port 8080'`` checks what
the answer says, as a test checks what the files hold. All pass: the answer is accepted. One fails:
the model reads the command, its exit status and the end of its output, and is asked again; after
``rounds`` such rounds the turn ends failed with ``ChecksFailed``. Each check reports
``CheckStarted``/``CheckFinished`` events, and the turn's ``CheckReport`` is kept under ``CHECKS_KEY``
(``check_report(result)``).

The commands are the capability's own (every turn of the bundle's sessions) plus the running turn's
(``session.state.app_state[CHECKS_KEY]``, which ``checks_for_turn`` sets: how a plan step's
``check:`` reaches the turn that runs it).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import anyio

from agcore._clock import monotonic
from agcore.agent._answers import CHECKED_BY_EFFECT_KEY
from agcore.agent._change_first import CHANGE_DUE_KEY
from agcore.agent._events import CheckFinished, CheckStarted
from agcore.agent._hands_off import HANDS_OFF_KEY
from agcore.agent._messages import ContextNote
from agcore.agent._turn_input import turn_input
from agcore.agent._wrap_up import JUDGED_KEY
from agcore.agent.capability import CallModel, Capability, Finish, Next, Reply, TurnView
from agcore.agent.checks._check_report import CHECKS_KEY, CheckOutcome, CheckReport, ChecksFailed
from agcore.agent.checks._fix_request import (
    UNCHANGED_ASKS,
    first_to_change,
    fix_request,
    named_files,
    unchanged_request,
    workspace_fingerprint,
)
from agcore.agent.checks._review_brief import changed_files
from agcore.agent.checks._shown_files import files_read, files_to_show
from agcore.tools import ToolError

if TYPE_CHECKING:
    from agcore.agent.session_like import SessionLike
    from agcore.llm.types import UserMessage
    from agcore.tools.workspace import Workspace

__all__ = ["AcceptanceChecks", "checks_for_turn", "turn_checks"]

#: How much of a failing check's output the model reads (its end: where a test run's verdict is).
DEFAULT_OUTPUT_CHARS = 4_000
#: A failing check's note shows the files changed so far (the newest, each cut): a small model
#: compares what it wrote with the task far better than it recalls it.
CHANGED_SHOWN = 3
CHANGED_CHARS = 600


class AcceptanceChecks(Capability):
    """Run ``commands`` in ``workspace`` whenever the model says it is done (answers without calls),
    through ``Workspace.execute``: the guard, the sandbox, the timeout and the output caps of
    ``run_command``; the answer's text is each check's standard input. All pass: the answer stands.
    One fails: the model reads its command, exit status and output's end, and is asked again; still
    failing after ``rounds`` such rounds, the turn ends failed with ``ChecksFailed``.
    ``CheckStarted``/``CheckFinished`` events report each check, and ``check_report(result)`` reads
    the turn's results. A turn's own checks (``checks_for_turn``) run after these. docs/checks.md has
    more.

    ``rounds``: how many times the model is asked to fix a failing check before the turn fails (0:
    fail at once). ``timeout``: seconds per check (default: the workspace's ``command_timeout``).
    ``output_chars``: how much of a failing check's output (its end) the model and the events get."""

    def __init__(
        self,
        workspace: Workspace,
        commands: Sequence[str] = (),
        *,
        rounds: int = 3,
        timeout: float | None = None,
        output_chars: int = DEFAULT_OUTPUT_CHARS,
    ) -> None:
        if isinstance(commands, str):
            raise TypeError(
                f"commands is a list of command lines: AcceptanceChecks(workspace, [{commands!r}])"
            )
        if rounds < 0:
            raise ValueError(f"rounds must be 0 or more, got {rounds}")
        empty = [c for c in commands if not c.strip()]
        if empty:
            raise ValueError("a check command is empty; give the command line to run, e.g. 'pytest -q'")
        self.workspace = workspace
        self.commands = tuple(commands)
        self.rounds = rounds
        self.timeout = timeout
        self.output_chars = output_chars

    def __repr__(self) -> str:
        return f"AcceptanceChecks({list(self.commands)!r}, rounds={self.rounds})"

    async def start_turn(self, steps: TurnView, message: UserMessage) -> None:
        if steps.session.parent is None and (self.commands or turn_checks(steps.session)):
            steps.turn.capabilities[JUDGED_KEY] = True  # WrapUp may make a reply the answer: it is checked

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        if steps.session.parent is not None:
            return None  # a sub-agent's task (a plan drafted read-only too) is not the user's to check
        commands = (*self.commands, *turn_checks(steps.session))
        if not commands:
            return None
        state: dict[str, Any] = steps.turn.capabilities.setdefault(CHECKS_KEY, {"rounds": 0})
        if await self._unchanged(steps, state, reply.message.text):
            same = "the same answer" if state.get("failed_answer") else "nothing changed"
            return CallModel(why=f"it answered with {same} since the check failed")
        state["rounds"] = round_ = int(state.get("rounds", 0)) + 1
        outcomes: list[CheckOutcome] = []
        for command in commands:
            outcome = await self._run(steps, command, round_, reply.message.text)
            outcomes.append(outcome)
            if not outcome.passed:  # the model fixes one failure at a time; the rest run next round
                break
        report = CheckReport(round_, outcomes)
        state["outcomes"] = report.to_json()["outcomes"]
        failure = report.failure
        if failure is None:
            return None
        asked = round_ - 1
        if failure.not_run or asked >= self.rounds:
            return Finish("error", ChecksFailed(failure, rounds=asked))
        await steps.record(ContextNote(text=await self._fix_request(steps, failure, asked + 1)))
        if not failure.read_answer:  # a check of the answer is fixed by a new answer, not a forced edit
            steps.turn.capabilities[CHANGE_DUE_KEY] = True  # ChangeFirst: the next reply makes a change
        steps.turn.capabilities[CHECKED_BY_EFFECT_KEY] = True  # an answer's words no longer decide
        state["failed_at"] = await anyio.to_thread.run_sync(workspace_fingerprint, self.workspace.root)
        state["failed_answer"] = _digest(reply.message.text) if failure.read_answer else None
        state["unchanged_asks"] = 0
        return CallModel(why=f"check failed: {failure.command} ({failure.status})")

    async def _unchanged(self, steps: TurnView, state: dict[str, Any], answer: str) -> bool:
        """Whether the model answered while the workspace (and, for a check that read the answer,
        the answer) is as the last failing check left it, and was asked for the change instead (at
        most ``UNCHANGED_ASKS`` times in a row)."""
        failed_at = state.get("failed_at")
        asks = int(state.get("unchanged_asks", 0))
        if failed_at is None or asks >= UNCHANGED_ASKS:
            return False
        if state.get("failed_answer") not in (None, _digest(answer)):
            return False  # a new answer is the change a check of the answer needs
        if await anyio.to_thread.run_sync(workspace_fingerprint, self.workspace.root) != failed_at:
            return False
        state["unchanged_asks"] = asks + 1
        failed = (state.get("outcomes") or [{}])[-1]
        note = unchanged_request(str(failed.get("command", "")), bool(failed.get("read_answer")))
        await steps.record(ContextNote(text=note))
        if not failed.get("read_answer"):
            steps.turn.capabilities[CHANGE_DUE_KEY] = True
        return True

    async def _run(self, steps: TurnView, command: str, round_: int, answer: str) -> CheckOutcome:
        steps.emit(CheckStarted(command=command, round=round_))
        started = monotonic()
        try:
            result = await self.workspace.execute(
                command, timeout=self.timeout, confirmed=True, stdin=answer
            )
        except ToolError as exc:  # refused by the guard, unreadable, a bad timeout: not the model's to fix
            outcome = CheckOutcome(command, False, f"not run: {exc}", round=round_, not_run=True)
        else:
            output = result.output_tail(self.output_chars)
            if _program_missing(result.exit_code, output):
                outcome = CheckOutcome(
                    command, False, "not run: the shell found no such command (exit 127)", 127, output,
                    round_, not_run=True,
                )  # fmt: skip
            else:
                outcome = CheckOutcome(
                    command, result.passed, result.status, result.exit_code, output, round_,
                    read_answer=result.read_stdin,
                )
        steps.emit(CheckFinished(
            command=command, round=round_, passed=outcome.passed, status=outcome.status,
            exit_code=outcome.exit_code, output=outcome.output, duration=monotonic() - started,
        ))  # fmt: skip
        return outcome

    async def _fix_request(self, steps: TurnView, failure: CheckOutcome, round_: int) -> str:
        root, since = self.workspace.root, steps.session.created_at
        output = failure.output.replace(f"{root}/", "")  # a traceback's paths, as the model names them
        files = await anyio.to_thread.run_sync(named_files, output, root)
        changed = await anyio.to_thread.run_sync(
            functools.partial(changed_files, root, since, most=CHANGED_SHOWN, chars=CHANGED_CHARS)
        )
        keep = [str(p) for p in steps.turn.capabilities.get(HANDS_OFF_KEY, ())]
        first = await anyio.to_thread.run_sync(first_to_change, output, root, keep)
        shown = await anyio.to_thread.run_sync(self._shown, steps, output, first, keep, set(changed))
        return fix_request(failure.command, failure.status, output, files, round_, self.rounds,
                           task=turn_input(steps), changed=changed, keep=keep, start_with=first,
                           shown=shown, read_answer=failure.read_answer)

    def _shown(
        self, steps: TurnView, output: str, first: str | None, keep: list[str], changed: set[str]
    ) -> dict[str, str]:
        """The files the note shows as read_file does (and so counted as read: the model may edit
        them at once), each path with read_file's output."""
        skip = changed | files_read(steps.session.messages[steps.turn.start :])
        shown: dict[str, str] = {}
        for path in files_to_show(output, self.workspace.root, start_with=first, keep=keep, skip=skip):
            try:
                shown[path] = self.workspace.read_file(path)
            except ToolError:
                continue
        return shown


def _digest(answer: str) -> str:
    return hashlib.sha256(answer.encode("utf-8")).hexdigest()[:16]


def _program_missing(exit_code: int | None, output: str) -> bool:
    """Whether the check's program does not exist (a typo, a tool not installed): the shell's exit 127
    with "command not found". No round of the model's fixes the user's command, so the turn fails at
    once instead of asking for fixes (a script the task makes, "./build.sh: No such file", still
    counts as a failure the model can fix)."""
    return exit_code == 127 and "command not found" in output


def turn_checks(session: SessionLike) -> list[str]:
    """The checks the session's running turn must pass besides the capability's own."""
    value = session.state.app_state.get(CHECKS_KEY)
    return [str(c) for c in value] if isinstance(value, list) else []


@contextmanager
def checks_for_turn(session: SessionLike, commands: Sequence[str]) -> Iterator[None]:
    """Add ``commands`` to the checks of the turns run inside the block (a plan step's ``check:``);
    they run through the bundle's ``AcceptanceChecks``, which must be there."""
    state = session.state.app_state
    before = state.get(CHECKS_KEY)
    if commands:
        state[CHECKS_KEY] = list(commands)
    try:
        yield
    finally:
        if before is None:
            state.pop(CHECKS_KEY, None)
        else:
            state[CHECKS_KEY] = before
