"""The CLI's reply cap: ``--max-tokens``, and by default a fifth of a small ``--context-window``
(``agcore.context.default_max_tokens``), sent to the local server as ``max_tokens``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agcore.cli._local import LocalOptions
from agcore.testing import ScriptedProvider
from tests.cli.conftest import Invoke
from tests.fake_llama import FakeLocalServer

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


@pytest.fixture
def llama() -> Iterator[FakeLocalServer]:
    with FakeLocalServer("llama.cpp") as server:
        yield server


def flat(text: str) -> str:
    return " ".join(text.split())


def test_run_with_a_small_window_sends_the_cap(invoke: Invoke, llama: FakeLocalServer) -> None:
    llama.answer(200, "Nothing to do.")
    done = invoke(
        "run",
        "say hi",
        "--base-url",
        llama.base_url,
        "--model",
        MODEL,
        "--yes",
        "--no-plugins",
        "--context-window",
        "4096",
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    assert llama.requests[0]["max_tokens"] == 819
    out = flat(done.stdout)
    assert "replies: at most 819 tokens each (small context window; --max-tokens N to change)" in out


def test_max_tokens_flag_overrides_the_default(invoke: Invoke, llama: FakeLocalServer) -> None:
    llama.answer(200, "Nothing to do.")
    done = invoke(
        "run",
        "say hi",
        "--base-url",
        llama.base_url,
        "--model",
        MODEL,
        "--yes",
        "--no-plugins",
        "--context-window",
        "4096",
        "--max-tokens",
        "300",
    )
    assert done.exit_code == 0, done.stdout + done.stderr
    assert llama.requests[0]["max_tokens"] == 300
    assert "replies: at most" not in flat(done.stdout)


def test_max_tokens_alone_and_no_window_no_cap(invoke: Invoke, llama: FakeLocalServer) -> None:
    llama.answer(200, "Nothing to do.")
    llama.answer(200, "Nothing to do.")
    base = ["--base-url", llama.base_url, "--model", MODEL, "--yes", "--no-plugins"]
    assert invoke("run", "say hi", *base).exit_code == 0
    assert invoke("run", "say hi", *base, "--max-tokens", "512").exit_code == 0
    first, second = llama.requests
    assert "max_tokens" not in first
    assert second["max_tokens"] == 512


def test_a_bad_max_tokens_is_a_usage_error(invoke: Invoke, llama: FakeLocalServer) -> None:
    done = invoke("run", "x", "--base-url", llama.base_url, "--model", MODEL, "--max-tokens", "0")
    assert done.exit_code == 2
    assert "--max-tokens" in done.stderr
    assert llama.requests == []


def test_plan_run_and_chat_take_the_option(invoke: Invoke) -> None:
    for command in (["plan", "run", "--help"], ["chat", "--help"], ["run", "--help"]):
        assert "--max-tokens" in flat(invoke(*command).stdout)


def test_the_option_is_kept_for_the_resume_command() -> None:
    assert LocalOptions(max_tokens=300).arguments() == ["--max-tokens", "300"]
    local = ScriptedProvider(["ok"], model_id=MODEL)
    assert LocalOptions(context_window=4096).config_changes(local) == {"max_tokens": 819}
