"""Exit codes, the ``CliError`` an expected failure raises, and which code each failure gets."""

from __future__ import annotations

import re
from enum import IntEnum
from urllib.parse import urlsplit

from agcore.agent import AgentLLMError, ConfigError, PlanParseError
from agcore.llm.errors import AuthenticationError, LLMError, ModelNotFoundError

__all__ = ["EXIT_CODES_HELP", "CliError", "ExitCode", "cli_advice", "exit_code_for"]


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


# Library advice in error messages, said with the CLI's own options (the library's errors name the
# AgentConfig fields and functions a program would change).
_CLI_WORDING = (
    (re.compile(r"raise AgentConfig\.max_(?:tool_)?turns"), "raise --max-turns"),
    (re.compile(r"\(max_(?:tool_)?turns=(\d+)\)"), r"(--max-turns \1)"),
    (re.compile(r"give the session a context transform \(agcore\.context\.create_context_transform[^)]*\)"),
     "run with --context-window N (the server's context window) so the history is compacted before it "
     "overflows, or add --compact"),
    (re.compile(r"(?:set )?AgentConfig\.text_mode_tools='(on|off)'"), r"run with --text-tools \1"),
)


def cli_advice(message: str, *, base_url: str | None = None, error: BaseException | None = None) -> str:
    """``message`` (an error's) with its library advice said as the CLI's options; with the
    ``--base-url`` given and a 404 (``error``), the hint that OpenAI-compatible servers serve under /v1."""
    for pattern, wording in _CLI_WORDING:
        message = pattern.sub(wording, message)
    cause = error.cause if isinstance(error, AgentLLMError) else error
    if base_url and isinstance(cause, ModelNotFoundError) and urlsplit(base_url).path.strip("/") == "":
        root = base_url.rstrip("/")
        message += (f" OpenAI-compatible servers usually answer under /v1: try --base-url {root}/v1 "
                    f"(`agcore models --base-url {root}` finds it).")
    return message


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
