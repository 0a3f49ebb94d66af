"""Context overflow as local servers word it, on real loopback HTTP: llama.cpp, vLLM, LM Studio and
Ollama's OpenAI-compatible API each answer a prompt that does not fit with their own body; agcore
must raise ``ContextWindowExceededError`` (the error that offers compaction) for every one, and keep
other 400s and 500s what they are."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agcore.agent import AgentLLMError
from agcore.llm import create_provider
from agcore.llm.errors import ContextWindowExceededError, InvalidRequestError, LLMError, ServerError
from agcore.llm.retry import NO_RETRY
from agcore.llm.types import LLMRequest, UserMessage
from tests.fake_llama import (
    LLAMA_CPP_OVERFLOW,
    LLAMA_CPP_OVERFLOW_OLD,
    LMSTUDIO_N_KEEP,
    LMSTUDIO_OVERFLOW,
    OLLAMA_OVERFLOW,
    VLLM_DECODER_OVERFLOW,
    VLLM_OVERFLOW,
    FakeLocalServer,
)

pytestmark = pytest.mark.anyio

REQUEST = LLMRequest.build([UserMessage(content="explain main.py")])


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLocalServer]:
    with FakeLocalServer() as fake:
        yield fake


async def failure(server: FakeLocalServer, status: int, body: Any) -> LLMError:
    server.answer(status, body)
    provider = create_provider(f"openai-compatible:{server.models[0]}", cache=False, base_url=server.base_url,
                               retry_policy=NO_RETRY)
    try:
        with pytest.raises(LLMError) as caught:
            await provider.complete(REQUEST)
    finally:
        await provider.aclose()  # type: ignore[attr-defined]
    return caught.value


@pytest.mark.parametrize(("status", "body", "says"), [
    (400, LLAMA_CPP_OVERFLOW, "exceeds the available context size (4096 tokens)"),
    (400, LLAMA_CPP_OVERFLOW_OLD, "enable context shift"),
    (500, LLAMA_CPP_OVERFLOW_OLD, "exceeds the available context size"),  # builds that said 500
    (400, VLLM_OVERFLOW, "maximum context length is 4096"),
    (400, VLLM_DECODER_OVERFLOW, "maximum model length of 4096"),
    (400, LMSTUDIO_OVERFLOW, "context length of only 7866"),
    (400, LMSTUDIO_N_KEEP, "n_keep (15028) >= n_ctx (7424)"),
    (400, OLLAMA_OVERFLOW, "exceeded max context length by 371"),
], ids=["llama.cpp", "llama.cpp-old", "llama.cpp-500", "vllm", "vllm-decoder", "lmstudio",
        "lmstudio-n_keep", "ollama"])
async def test_local_overflow_is_recognised(
    server: FakeLocalServer, status: int, body: Any, says: str
) -> None:
    error = await failure(server, status, body)
    assert isinstance(error, ContextWindowExceededError)
    assert says in error.message
    assert "compaction" in error.message
    assert not error.is_retryable
    agent_error = AgentLLMError(error)
    assert "context transform" in str(agent_error)  # how to compact, not "check max_tokens and schemas"
    assert "max_tokens" not in str(agent_error)


async def test_other_local_errors_stay_what_they_are(server: FakeLocalServer) -> None:
    bad = {"error": {"code": 400, "message": "'messages' must be a non-empty array",
                     "type": "invalid_request_error"}}
    error = await failure(server, 400, bad)
    assert type(error) is InvalidRequestError
    jinja = {"error": {"code": 500, "message": "Jinja Exception: System message must be at the beginning",
                       "type": "server_error"}}
    assert type(await failure(server, 500, jinja)) is ServerError
