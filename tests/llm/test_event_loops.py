"""A provider kept across event loops: each ``anyio.run`` (``QuickAgent.run_sync`` twice, a script
that starts one loop per request, a cached provider shared by several) gets working HTTP connections.

Proven on real loopback HTTP with keep-alive, so the first loop leaves a pooled connection behind: a
small server answers the Chat Completions, Messages and Ollama chat shapes. Before, the second loop's
call failed with "Event loop is closed" (the pooled connection belonged to the first loop), and a
client dropped without closing logged "Task exception was never retrieved".
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import pytest

from agcore.llm import LLMProvider, LLMRequest, UserMessage
from agcore.llm.providers.anthropic import AnthropicProvider
from agcore.llm.providers.ollama import OllamaProvider
from agcore.llm.providers.openai import OpenAIProvider
from agcore.llm.retry import NO_RETRY

from .test_anthropic_provider import message_body
from .test_openai_provider import completion

OLLAMA_REPLY = {
    "model": "qwen3:1.7b", "created_at": "2025-06-02T10:00:00.000000Z",
    "message": {"role": "assistant", "content": "hello"}, "done_reason": "stop", "done": True,
    "total_duration": 412000000, "prompt_eval_count": 12, "eval_count": 2,
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client pools the connection

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.path.endswith("/chat/completions"):
            body = completion({"content": "hello"})
        elif self.path.endswith("/messages"):
            body = message_body([{"type": "text", "text": "hello"}])
        else:
            body = OLLAMA_REPLY
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


PROVIDERS: dict[str, Callable[[str], LLMProvider]] = {
    "openai": lambda url: OpenAIProvider("gpt-4.1", base_url=f"{url}/v1", api_key="k", retry_policy=NO_RETRY),
    "anthropic": lambda url: AnthropicProvider("claude-haiku-4-5", base_url=url, api_key="k",
                                               retry_policy=NO_RETRY),
    "ollama": lambda url: OllamaProvider("qwen3:1.7b", host=url, retry_policy=NO_RETRY),
}


async def ask(provider: LLMProvider) -> str:
    response = await provider.complete(LLMRequest.build([UserMessage(content="hi")]))
    return response.text


@pytest.mark.parametrize("vendor", sorted(PROVIDERS))
def test_one_provider_answers_in_each_new_event_loop(
    vendor: str, server: str, caplog: pytest.LogCaptureFixture
) -> None:
    provider = PROVIDERS[vendor](server)
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        answers = [anyio.run(ask, provider), anyio.run(ask, provider),
                   anyio.run(ask, provider, backend="trio"), anyio.run(ask, provider)]
        anyio.run(provider.aclose)  # from yet another loop
    assert answers == ["hello"] * 4
    assert not [r for r in caplog.records if r.name == "asyncio"], "a dropped client reported an error"
    assert provider.closed


def test_a_client_the_caller_gave_stays_the_callers() -> None:
    """``client=`` is the caller's to manage: it is never swapped for a new one (they know their
    loops); only the clients a provider makes itself are made again."""
    calls: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        return httpx.Response(200, json=OLLAMA_REPLY)

    given = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    provider = OllamaProvider("qwen3:1.7b", host="http://127.0.0.1:9", client=given, retry_policy=NO_RETRY)
    assert [anyio.run(ask, provider), anyio.run(ask, provider)] == ["hello", "hello"]
    assert calls == ["/api/chat", "/api/chat"]  # both through the caller's client
