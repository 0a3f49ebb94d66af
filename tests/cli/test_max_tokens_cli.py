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


def test_max_tokens_alone_and_no_window_no_cap(invoke: Invoke) -> None:
    with FakeLocalServer("ollama", models=["qwen2.5-coder:1.5b"]) as ollama:  # reports no window
        ollama.answer(200, "Nothing to do.")
        ollama.answer(200, "Nothing to do.")
        base = ["--base-url", ollama.base_url, "--model", "qwen2.5-coder:1.5b", "--yes", "--no-plugins"]
        assert invoke("run", "say hi", *base).exit_code == 0
        assert invoke("run", "say hi", *base, "--max-tokens", "512").exit_code == 0
    first, second = ollama.requests
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


def test_the_window_a_local_server_reports_counts(invoke: Invoke, llama: FakeLocalServer) -> None:
    llama.answer(200, "Nothing to do.")
    done = invoke("run", "say hi", "--base-url", llama.base_url, "--model", MODEL, "--yes", "--no-plugins")
    assert done.exit_code == 0, done.stdout + done.stderr
    out = flat(done.stdout)
    assert "context window: 4,096 tokens, as the server reports (--context-window N to change)" in out
    assert "compaction: on, context window 4,096 tokens" in out
    assert llama.requests[0]["max_tokens"] == 819
    assert "/props" in llama.paths


def test_a_vllm_window_counts_and_a_large_one_is_left_alone(invoke: Invoke) -> None:
    with FakeLocalServer("vllm", models=["Qwen/Qwen2.5-Coder-7B-Instruct"], n_ctx=65536) as vllm:
        vllm.answer(200, "Nothing to do.")
        done = invoke(
            "run",
            "say hi",
            "--base-url",
            vllm.base_url,
            "--model",
            "Qwen/Qwen2.5-Coder-7B-Instruct",
            "--yes",
            "--no-plugins",
        )
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "compaction: off (a context window of 65,536 tokens is not small)" in flat(done.stdout)
    assert "max_tokens" not in vllm.requests[0]


def test_a_hosted_api_is_not_probed() -> None:
    import anyio

    from agcore.cli._served import served_window

    # Not local: answered without a request (nothing listens there, and nothing is asked).
    assert anyio.run(served_window, "https://api.deepseek.com/v1", "deepseek-chat") is None
