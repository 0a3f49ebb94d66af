"""Exit codes, the ``CliError`` an expected failure raises, and which code each failure gets."""

from __future__ import annotations

from enum import IntEnum

from agcore.agent import AgentLLMError, ConfigError, PlanParseError
from agcore.llm.errors import AuthenticationError, LLMError

__all__ = ["EXIT_CODES_HELP", "CliError", "ExitCode", "exit_code_for"]


#: A script file (``--model scripted:FILE``) that runs out of replies, or whose ``expect`` is not met.
_SCRIPT_ERRORS = frozenset({"ScriptExhaustedError", "ScriptExpectationError"})


class ExitCode(IntEnum):
    OK = 0
    TASK_FAILED = 1
    USAGE = 2
    CONFIG = 3
    PROVIDER = 4
    INTERRUPTED = 130


EXIT_CODES_HELP = (
    "Exit codes: 0 done; 1 the task failed (turn error or limit, a plan step failed); "
    "2 usage error (bad option, bad plan file, unknown session, a scripted model's file that does not "
    "fit the run); "
    "3 configuration (missing API key, bad model spec, invalid plugin); "
    "4 provider unreachable or API error; 130 interrupted (Ctrl-C)."
)


class CliError(Exception):
    """An expected failure: ``message`` is shown without a traceback and the process exits ``code``."""

    def __init__(self, message: str, code: ExitCode) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def exit_code_for(error: BaseException) -> ExitCode:
    """The exit code a turn or command that failed with ``error`` ends with."""
    if isinstance(error, ConfigError):
        return ExitCode.CONFIG
    if isinstance(error, PlanParseError):
        return ExitCode.USAGE
    cause = error.cause if isinstance(error, AgentLLMError) else error
    if type(cause).__name__ in _SCRIPT_ERRORS:  # --model scripted:FILE does not fit the run
        return ExitCode.USAGE  # (matched by name: agcore.testing is not imported for every run)
    if isinstance(cause, AuthenticationError):
        return ExitCode.CONFIG  # the key is missing or rejected: the user fixes their setup
    if isinstance(cause, LLMError):
        return ExitCode.PROVIDER
    return ExitCode.TASK_FAILED  # a limit, a hook that blocked the turn, a failing tool or callback
