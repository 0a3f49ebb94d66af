"""Valid calls by construction: text-mode replies constrained, while the server decodes them, to
calls to the offered tools or a final answer (``_reply_shape``), on servers that can enforce a JSON
Schema: llama.cpp's ``llama-server``, vLLM and Ollama. A small model then cannot misspell a tool,
garble its arguments' JSON or copy the protocol's placeholder: every reply reads.

``AgentConfig.constrained_calls`` decides: ``"auto"`` constrains a text-mode call when the server is
recognised as one of the three (``agcore.llm.detect_local_server``: asked once per server, never a
cloud vendor); on llama.cpp and vLLM it also takes text mode for a model that would otherwise be
tried with native tools first (auto mode on a model the registry does not know). ``"on"``
constrains every text-mode and auto-mode call on any server; ``"off"`` never. No typed output is
constrained this way (its own ``response_format`` comes first).

The schema travels as the request's ``response_format``, which each provider puts on its wire
(Chat Completions' ``response_format`` of type ``json_schema``, which llama.cpp, vLLM and Ollama's
``/v1`` all take; Ollama's ``format`` on ``/api/chat``). A server that refuses it (HTTP 400) gets
the same call again without it, and is not asked again for the rest of the process: the reply
shape stays readable without the constraint.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agcore.agent.capability import Capability, ModelCall, Reply, TurnView
from agcore.agent.textcalls._answer_stream import AnswerTextFilter
from agcore.agent.textcalls._reply_shape import answer_of, is_constrained, reply_format, shaped_request
from agcore.llm import (
    ContextWindowExceededError,
    ErrorEvent,
    InvalidRequestError,
    LLMProvider,
    LLMRequest,
    LLMResponse,
    StreamEvent,
    TextBlock,
    detect_local_server,
)

if TYPE_CHECKING:
    from agcore.agent._config import AgentConfig

__all__ = ["ConstrainedCalls"]

_log = logging.getLogger("agcore.agent")

# Servers that refused the constraint, by ``_server_of``: asked without it from then on.
_refused: set[str] = set()


def _server_of(provider: LLMProvider) -> str:
    client = getattr(provider, "client", None)
    where = getattr(client, "base_url", None) or getattr(provider, "host", None) or ""
    return f"{provider.provider_name} {where}".rstrip()


def _refusal(error: BaseException) -> bool:
    return isinstance(error, InvalidRequestError) and not isinstance(error, ContextWindowExceededError)


def _unconstrained(request: LLMRequest) -> LLMRequest:
    return request.model_copy(update={"response_format": None})


class _FallbackProvider:
    """``inner``, except that a constrained request the server refuses is sent again without the
    constraint (and the server is remembered as refusing it)."""

    def __init__(self, inner: LLMProvider) -> None:
        self._inner = inner

    @property
    def provider_name(self) -> str:
        return self._inner.provider_name

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _refused(self, error: BaseException) -> None:
        _refused.add(_server_of(self._inner))
        _log.warning(
            "%s refused the constrained reply shape (%s); calls to it go unconstrained from now on "
            "(AgentConfig.constrained_calls='off' skips asking)", _server_of(self._inner), error,
        )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        try:
            return await self._inner.complete(request)
        except InvalidRequestError as error:
            if not _refusal(error):
                raise
            self._refused(error)
        return await self._inner.complete(_unconstrained(request))

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamEvent]:
        started = False
        try:
            async for event in self._inner.stream(request):
                if not started and isinstance(event, ErrorEvent) and _refusal(error := event.to_exception()):
                    self._refused(error)
                    break
                started = True
                yield event
            else:
                return
        except InvalidRequestError as error:
            if started or not _refusal(error):
                raise
            self._refused(error)
        async for event in self._inner.stream(_unconstrained(request)):
            yield event

    async def health_check(self) -> bool:
        return await self._inner.health_check()


# Servers whose native tool calling hangs on how they were started (llama.cpp's --jinja and the
# model's template, vLLM's --enable-auto-tool-choice): a call that would try native tools first
# takes constrained text mode there. Ollama knows per model whether it takes tools: only its
# text-mode calls are constrained.
_TEXT_FIRST = frozenset({"llama.cpp", "vllm"})


async def _wanted(config: AgentConfig, call: ModelCall) -> bool:
    """Whether ``call`` (text mode, or native tools checked for text calls) is constrained."""
    setting = config.constrained_calls
    if setting == "off" or _server_of(call.provider) in _refused:
        return False
    if setting == "on":
        return True
    server = await detect_local_server(call.provider)
    return server is not None and (call.tool_mode == "text" or server in _TEXT_FIRST)


class ConstrainedCalls(Capability):
    """Text-mode replies constrained to calls to the offered tools or an answer (see the module)."""

    async def shape_request(self, steps: TurnView, call: ModelCall) -> None:
        output = steps.turn.output
        request = call.request
        if (call.tool_mode == "native" or not request.tools or request.response_format is not None
                or (output is not None and not output.is_text)):
            return
        if not await _wanted(steps.config, call):
            return
        call.tool_mode = "text"
        call.request = request.model_copy(update={"response_format": reply_format(request.tools)})

    def encode_request(self, steps: TurnView, call: ModelCall) -> None:
        if call.tool_mode == "text" and is_constrained(call.request):
            call.request = shaped_request(call.request)

    def review_request(self, steps: TurnView, call: ModelCall) -> None:
        if call.tool_mode == "text" and is_constrained(call.request):
            call.text_filter = AnswerTextFilter(call.text_filter)
            call.provider = _FallbackProvider(call.provider)

    async def read_reply(self, steps: TurnView, call: ModelCall, reply: Reply) -> None:
        if not is_constrained(call.request) or reply.message.tool_calls:
            return
        answer = answer_of(reply.message.text)
        if answer is not None:
            others = [b for b in reply.message.content if not isinstance(b, TextBlock)]
            reply.message = reply.message.model_copy(update={"content": [*others, TextBlock(text=answer)]})
