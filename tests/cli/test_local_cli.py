"""The CLI against local model servers on loopback (``tests.fake_llama``): ``agcore models --base-url``
(up or not, context sizes where the server reports them), and ``agcore run`` with the small-model
options (``--text-tools``, ``--max-turns``, ``--temperature``, ``--context-window``, ``--compact``),
the overflow error, and the undo hint after a write."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke
from tests.fake_llama import LLAMA_CPP_OVERFLOW, FakeLocalServer

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


@pytest.fixture
def llama() -> Iterator[FakeLocalServer]:
    with FakeLocalServer("llama.cpp") as server:
        yield server


def flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------------- models


def test_models_lists_what_llama_server_serves_with_its_context(
    invoke: Invoke, llama: FakeLocalServer
) -> None:
    done = invoke("models", "--base-url", llama.base_url)
    assert done.exit_code == 0, done.stderr
    out = flat(done.stdout)
    assert f"{llama.base_url} is up · 1 model" in out
    assert f"{MODEL} 4,096 32,768 llamacpp" in out  # served n_ctx from /props, trained from meta
    assert f"agcore run --base-url {llama.base_url} --model {MODEL} --context-window 4096" in out
    assert "/props" in llama.paths


def test_models_reads_vllm_max_model_len(invoke: Invoke) -> None:
    with FakeLocalServer("vllm", models=["Qwen/Qwen2.5-Coder-7B-Instruct"], n_ctx=16384) as vllm:
        done = invoke("models", "--base-url", vllm.base_url)
    assert done.exit_code == 0, done.stderr
    assert "Qwen/Qwen2.5-Coder-7B-Instruct 16,384 - vllm" in flat(done.stdout)


def test_models_on_ollama_asks_for_the_window(invoke: Invoke) -> None:
    with FakeLocalServer("ollama", models=["qwen2.5-coder:1.5b", "llama3.1:8b"]) as ollama:
        done = invoke("models", "--base-url", ollama.base_url)
    assert done.exit_code == 0, done.stderr
    out = flat(done.stdout)
    assert "is up · 2 models" in out
    assert "qwen2.5-coder:1.5b - - library" in out
    assert "--model qwen2.5-coder:1.5b --context-window N" in out


def test_models_finds_the_v1_path(invoke: Invoke, llama: FakeLocalServer) -> None:
    done = invoke("models", "--base-url", llama.root)  # /models is not served without /v1 here
    assert done.exit_code == 0, done.stderr
    assert f"{llama.base_url} is up" in flat(done.stdout)


def test_models_says_when_the_server_is_not_up(invoke: Invoke) -> None:
    done = invoke("models", "--base-url", "http://127.0.0.1:9/v1")  # nothing listens on port 9
    assert done.exit_code == 4
    err = flat(done.stderr)
    assert "could not connect to http://127.0.0.1:9/v1" in err
    assert "is the server running?" in err
    assert "llama-server -m MODEL.gguf" in err


# ---------------------------------------------------------------------------------------- run


def test_run_with_the_small_model_options(invoke: Invoke, llama: FakeLocalServer, tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("print('hello')\n")
    call = '{"name": "read_file", "arguments": {"path": "main.py"}}'
    llama.answer(200, f"I will read it.\n```json\n{call}\n```")
    llama.answer(200, "main.py prints hello.")
    done = invoke("run", "explain main.py", "--base-url", llama.base_url, "--model", MODEL, "--yes",
                  "--no-plugins", "--text-tools", "on", "--temperature", "0.2", "--max-turns", "4",
                  "--context-window", "4096", "--no-review")
    assert done.exit_code == 0, done.stdout + done.stderr
    out = flat(done.stdout)
    assert "compaction: on, context window 4,096 tokens" in out
    assert "✓ done (unchecked)" in out  # --no-review: no review request
    first, second = llama.requests
    assert first["temperature"] == 0.2
    assert "tools" not in first  # text mode: the tools are described in the prompt
    assert "read_file" in json.dumps(first["messages"][0])
    assert "print('hello')" in json.dumps(second["messages"])  # the call ran, its result went back


def test_max_turns_stops_the_run(invoke: Invoke, llama: FakeLocalServer, tmp_path: Path) -> None:
    for i in range(3):
        llama.answer(200, f'{{"name": "list_dir", "arguments": {{"path": ".", "depth": {i + 1}}}}}')
    done = invoke("run", "look", "--base-url", llama.base_url, "--model", MODEL, "--yes", "--no-plugins",
                  "--text-tools", "on", "--max-turns", "2")
    assert done.exit_code == 1
    out = flat(done.stdout)
    assert "--max-turns 2" in out  # the CLI's option, not the library's AgentConfig field
    assert "raise --max-turns" in out
    assert "AgentConfig" not in out
    assert len(llama.requests) == 2


def test_overflow_offers_compaction(invoke: Invoke, llama: FakeLocalServer) -> None:
    llama.answer(400, LLAMA_CPP_OVERFLOW)
    done = invoke("run", "explain", "--base-url", llama.base_url, "--model", MODEL, "--yes", "--no-plugins")
    assert done.exit_code == 4
    out = flat(done.stdout)
    assert "does not fit the model's context window" in out
    assert "--context-window N" in out
    assert "create_context_transform" not in out  # library advice, not for the command line
    assert "max_tokens" not in out


def test_a_base_url_without_v1_gets_the_hint(invoke: Invoke, llama: FakeLocalServer) -> None:
    done = invoke("run", "x", "--base-url", llama.root, "--model", MODEL, "--yes", "--no-plugins")
    assert done.exit_code == 4
    out = flat(done.stdout)
    assert "not found" in out
    assert f"try --base-url {llama.root}/v1" in out


def test_text_calls_that_stay_unreadable_fail_the_run_with_cli_advice(
    invoke: Invoke, llama: FakeLocalServer
) -> None:
    for _ in range(3):
        llama.answer(200, '<tool_call>{"name": "read_fil", "arguments": {"path": "a"}}</tool_call>')
    done = invoke("run", "read a", "--base-url", llama.base_url, "--model", MODEL, "--yes", "--no-plugins",
                  "--text-tools", "on")
    assert done.exit_code == 1
    out = flat(done.stdout)
    assert "✗ failed: The model's reply held only tool calls that could not be read" in out
    assert "no tool named 'read_fil'" in out
    assert "run with --text-tools off" in out
    assert "✓ done" not in out


def test_bad_local_options_are_usage_errors(invoke: Invoke, llama: FakeLocalServer) -> None:
    done = invoke("run", "x", "--base-url", llama.base_url, "--model", MODEL, "--text-tools", "maybe")
    assert done.exit_code == 2
    assert "choose on, off or auto" in done.stderr
    with FakeLocalServer("llama.cpp", n_ctx=None) as silent:  # a server that does not say its window
        done = invoke("run", "x", "--base-url", silent.base_url, "--model", MODEL, "--compact",
                      "--no-plugins")
        assert silent.requests == []
    assert done.exit_code == 2
    assert "--context-window N" in flat(done.stderr)
    assert llama.requests == []


def test_a_write_shows_how_to_undo_it(invoke: Invoke, tmp_path: Path) -> None:
    script = tmp_path / "model.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "hi"}}]}, "done",
    ]))
    done = invoke("run", "write notes", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 0, done.stdout + done.stderr
    out = flat(done.stdout)
    assert "✓ Created 'notes.txt' (2 bytes)." in out
    assert "(+1 lines)" not in out
    assert "↩ undo" not in out  # `run` takes no follow-up turn to ask for it in


def test_plan_run_says_when_the_model_switches_to_text_mode(
    invoke: Invoke, llama: FakeLocalServer, tmp_path: Path
) -> None:
    plan = {"steps": [{"id": "look", "description": "List the files"}]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    (tmp_path / "main.py").write_text("print('hello')\n")
    llama.answer(200, '```json\n{"name": "list_dir", "arguments": {"path": "."}}\n```')
    llama.answer(200, "The workspace holds main.py.")
    done = invoke("plan", "run", "plan.json", "--base-url", llama.base_url, "--model", MODEL, "--yes",
                  "--no-plugins", "--max-turns", "5", "--context-window", "4096",
                  "--constrained-calls", "off")
    assert done.exit_code == 0, done.stdout + done.stderr
    out = flat(done.stdout)
    assert f"{MODEL} writes its tool calls as text: text-mode tool calls from now on" in out
    assert out.index("text-mode tool calls from now on") < out.index("▸ list_dir")
    assert "↩ undo" not in out


def test_run_on_llama_cpp_constrains_replies_and_shows_the_answer_not_its_json(
    invoke: Invoke, llama: FakeLocalServer, tmp_path: Path
) -> None:
    (tmp_path / "main.py").write_text("print('hello')\n")
    llama.answer(200, '{"tool_calls": [{"name": "read_file", "arguments": {"path": "main.py"}}]}')
    llama.answer(200, '{"answer": "main.py prints hello."}')
    llama.answer(200, '{"missing": "", "done": true}')  # the review of the work
    done = invoke("run", "what does main.py print?", "--base-url", llama.base_url, "--model", MODEL, "--yes",
                  "--no-plugins", "--workspace", str(tmp_path))
    assert done.exit_code == 0, done.stdout + done.stderr
    out = flat(done.stdout)
    assert "main.py prints hello." in out
    assert '"answer"' not in out
    assert "tool_calls" not in out
    assert "▸ read_file" in out
    assert "✓ done · reviewed" in out
    first, second, review = llama.requests
    assert first["response_format"]["type"] == "json_schema"
    assert "tools" not in first
    assert "response_format" in second
    assert review["response_format"]["json_schema"]["schema"]["required"] == ["done"]
    assert "THE TASK:\\nwhat does main.py print?" in json.dumps(review["messages"])


def test_no_answer_review_keeps_the_claims_held_to_the_files_without_the_review_request(
    invoke: Invoke, llama: FakeLocalServer, tmp_path: Path
) -> None:
    llama.answer(200, '{"tool_calls": [{"name": "read_file", "arguments": {"path": "main.py"}}]}')
    llama.answer(200, '{"answer": "I wrote notes.txt with the summary."}')  # the files do not bear it out
    llama.answer(200, '{"answer": "I wrote notes.txt with the summary, again."}')
    (tmp_path / "main.py").write_text("print('hello')\n")
    done = invoke("run", "summarise main.py into notes.txt", "--base-url", llama.base_url, "--model", MODEL,
                  "--yes", "--no-plugins", "--workspace", str(tmp_path), "--no-answer-review")
    out = flat(done.stdout)
    assert done.exit_code == 1, out
    assert "✗ failed" in out  # ClaimedChanges: notes.txt does not exist
    assert "notes.txt" in out
    assert len(llama.requests) == 3  # no review request among them
    assert all("THE TASK:" not in json.dumps(r["messages"]) for r in llama.requests)


def test_constrained_calls_off_sends_no_schema(invoke: Invoke, llama: FakeLocalServer) -> None:
    llama.answer(200, "Hello.")
    done = invoke("run", "say hello", "--base-url", llama.base_url, "--model", MODEL, "--yes", "--no-plugins",
                  "--constrained-calls", "off")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert "response_format" not in llama.requests[0]
    bad = invoke("run", "say hello", "--base-url", llama.base_url, "--model", MODEL,
                 "--constrained-calls", "yes")
    assert bad.exit_code != 0
    assert "choose on, off or auto" in flat(bad.stdout + bad.stderr)


@pytest.mark.parametrize("text_tools", ["auto", "on"])
def test_run_shows_a_local_models_think_block_as_thinking_not_as_the_answer(
    invoke: Invoke, llama: FakeLocalServer, text_tools: str
) -> None:
    llama.answer(200, "<think>\nThe user says hello. A short greeting will do.\n</think>\n\nHello there.")
    done = invoke("run", "say hello", "--base-url", llama.base_url, "--model", MODEL, "--yes", "--no-plugins",
                  "--text-tools", text_tools)
    assert done.exit_code == 0, done.stdout + done.stderr
    out = flat(done.stdout)
    assert "<think>" not in out
    assert "</think>" not in out
    assert "thinking: The user says hello. A short greeting will do." in out
    assert out.index("thinking:") < out.index("Hello there.")


# ------------------------------------------------------------- --base-url alone, a server that is down


def closed_port() -> int:
    """A loopback port nothing listens on: bound, then closed again."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_run_with_base_url_alone_runs_the_one_model_the_server_serves(
    invoke: Invoke, llama: FakeLocalServer
) -> None:
    llama.answer(200, "Hello from the local model.")
    done = invoke("run", "say hello", "--base-url", llama.base_url, "--yes", "--no-plugins")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert f"model: {MODEL} (the one {llama.base_url} serves)" in flat(done.stdout)
    [request] = llama.requests
    assert request["model"] == MODEL


def test_run_with_base_url_alone_lists_the_models_of_a_server_with_several(invoke: Invoke) -> None:
    with FakeLocalServer("ollama", models=["qwen2.5-coder:1.5b", "llama3.1:8b"]) as ollama:
        done = invoke("run", "hi", "--base-url", ollama.base_url, "--no-plugins")
        assert ollama.requests == []  # nothing was sent to a model chosen for the user
    assert done.exit_code == 3
    assert "serves 2 models; pick one with --model:" in done.stderr
    assert "--model qwen2.5-coder:1.5b" in done.stderr
    assert "--model llama3.1:8b" in done.stderr


def test_run_with_base_url_alone_and_nothing_listening_says_how_to_start_one(invoke: Invoke) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = invoke("run", "hi", "--base-url", url, "--no-plugins")
    assert done.exit_code == 4
    err = flat(done.stderr)
    assert f"could not connect to {url}" in err
    assert "llama-server -m MODEL.gguf" in err


@pytest.mark.parametrize("spec", ["qwen2.5-coder", "ollama:qwen2.5-coder"])
def test_a_refused_loopback_server_fails_at_once_with_how_to_start_it(
    invoke: Invoke, spec: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    if spec.startswith("ollama:"):
        monkeypatch.setenv("OLLAMA_HOST", url.removesuffix("/v1"))
        args = ["--model", spec]
    else:
        args = ["--model", spec, "--base-url", url]
    done = invoke("run", "hi", *args, "--no-plugins")
    assert done.exit_code == 4
    everything = flat(done.stdout + done.stderr)
    assert "retrying" not in everything  # not retried: nothing listens there
    assert "nothing is listening at" in everything
    assert "ollama serve" in everything
    assert "1 model call" in everything
