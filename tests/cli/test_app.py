"""The command line's surface: help and exit codes, ``models``, ``plugins``, the missing ``cli`` extra,
and how turn endings map to exit codes."""

from __future__ import annotations

import re
import sys

import pytest

from agcore.agent import AgentLLMError, ConfigError, LimitExceeded, PlanParseError, TurnResult
from agcore.cli._errors import ExitCode, exit_code_for
from agcore.cli._run import result_exit_code
from agcore.llm.errors import LLMConnectionError, MissingCredentialsError, OverloadedError
from tests.cli.conftest import Invoke


def test_help_lists_the_commands_and_documents_the_exit_codes(invoke: Invoke) -> None:
    done = invoke("--help")
    assert done.exit_code == 0
    for command in ("run", "chat", "plan", "models", "plugins"):
        assert re.search(rf"^\s+{command}\s", done.stdout, re.MULTILINE), command
    text = " ".join(done.stdout.split())
    for code in ("0 done", "1 the task failed", "2 usage error", "3 configuration", "4 provider unreachable",
                 "130 interrupted"):
        assert code in text


def test_plan_help_lists_run_and_draft(invoke: Invoke) -> None:
    done = invoke("plan", "--help")
    assert done.exit_code == 0
    assert re.search(r"^\s+run\s", done.stdout, re.MULTILINE)
    assert re.search(r"^\s+draft\s", done.stdout, re.MULTILINE)


def test_an_unknown_option_is_a_usage_error(invoke: Invoke) -> None:
    done = invoke("run", "x", "--frobnicate")
    assert done.exit_code == 2
    done = invoke("plan", "run", "p.json", "--on-failure", "sometimes")
    assert done.exit_code == 2
    assert "stop, continue or retry" in done.stderr


def test_models_shows_the_registry_with_prices_and_capabilities(invoke: Invoke) -> None:
    done = invoke("models", "--provider", "anthropic")
    assert done.exit_code == 0
    row = next(line for line in done.stdout.splitlines() if "claude-haiku-4-5 " in line)
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert cells == ["claude-haiku-4-5", "anthropic", "200,000", "64,000", "1", "5", "0.1", "1.25",
                     "tools, vision, thinking"]
    assert "gpt-" not in done.stdout


def test_models_for_an_unknown_provider_names_the_known_ones(invoke: Invoke) -> None:
    done = invoke("models", "--provider", "nobody")
    assert done.exit_code == 2
    assert "anthropic" in done.stderr
    assert "openai" in done.stderr


def test_plugins_lists_the_entry_point_plugins_and_their_hooks(invoke: Invoke) -> None:
    done = invoke("plugins")
    assert done.exit_code == 0
    row = next(line for line in done.stdout.splitlines() if "review_guard" in line)
    assert "agcore-downstream-example" in row
    assert "agcore_downstream_example.plugin" in row
    assert "before_tool_call, on_turn_start" in row


def test_version(invoke: Invoke) -> None:
    done = invoke("--version")
    assert done.exit_code == 0
    assert done.stdout.startswith("agcore ")


def test_main_without_the_cli_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import agcore.cli

    monkeypatch.setitem(sys.modules, "typer", None)  # import typer now raises ImportError
    with pytest.raises(SystemExit) as info:
        agcore.cli.main(["models"])
    assert info.value.code == 3
    assert "install agcore[cli]" in capsys.readouterr().err


def test_importing_the_package_does_not_import_typer() -> None:
    import subprocess

    code = "import sys, agcore.cli; print('typer' in sys.modules, 'rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize(("error", "code"), [
    (AgentLLMError(LLMConnectionError("down")), ExitCode.PROVIDER),
    (AgentLLMError(OverloadedError("busy")), ExitCode.PROVIDER),
    (AgentLLMError(MissingCredentialsError("no key")), ExitCode.CONFIG),
    (ConfigError("bad", piece="tools"), ExitCode.CONFIG),
    (LimitExceeded("max_turns", value=3), ExitCode.TASK_FAILED),
    (PlanParseError("bad plan"), ExitCode.USAGE),
])
def test_failures_map_to_the_documented_exit_codes(error: Exception, code: ExitCode) -> None:
    assert exit_code_for(error) == code


def test_turn_endings_map_to_exit_codes() -> None:
    assert result_exit_code(TurnResult(stop="done")) == 0
    assert result_exit_code(TurnResult(stop="stopped_by_hook")) == 0
    assert result_exit_code(TurnResult(stop="cancelled")) == 130
    limit = LimitExceeded("max_turns", value=3)
    assert result_exit_code(TurnResult(stop="limit", error=limit)) == 1
    assert result_exit_code(TurnResult(stop="error", error=AgentLLMError(LLMConnectionError("x")))) == 4
