"""Test doubles for ``LLMProvider``: a scripted model and a model that is a Python function.

Both are real ``BaseProvider``s, so everything around the model call is the production code:
the retry layer, the ``ErrorEvent``-instead-of-raise rule of ``stream()``, and a streamed reply
that is a genuine event sequence (Start/Delta/End per block, ``UsageEvent``, ``DoneEvent``).
"""

from __future__ import annotations

import inspect
import json
from abc import abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeAlias

import anyio.lowlevel

from agcore.llm import (
    NO_RETRY,
    AssistantMessage,
    BaseProvider,
    ContentBlock,
    LLMError,
    LLMRequest,
    LLMResponse,
    Message,
    RetryPolicy,
    StopReason,
    StreamAssembler,
    StreamEvent,
    TextBlock,
    ThinkingBlock,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
    message_to_events,
    new_call_id,
)

__all__ = [
    "FunctionProvider",
    "ReplyFunction",
    "Responder",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "ScriptedReply",
    "ScriptedResponse",
    "text_reply",
    "tool_call_reply",
    "tool_calls_reply",
]

#: What a model turn can be given as: a finished message, or plain text (an END_TURN text reply).
ScriptedReply: TypeAlias = AssistantMessage | str
#: A response computed from the request it answers (sync or async).
Responder: TypeAlias = Callable[[LLMRequest], ScriptedReply | Awaitable[ScriptedReply]]
#: One entry of a ``ScriptedProvider`` script; an ``LLMError`` is the call failing with it.
ScriptedResponse: TypeAlias = AssistantMessage | str | LLMError | Responder
#: ``FunctionProvider``'s model: ``fn(messages, tools)`` (sync or async).
ReplyFunction: TypeAlias = Callable[
    [list[Message], list[ToolDefinition]], ScriptedReply | Awaitable[ScriptedReply]
]


class ScriptExhaustedError(LLMError):
    """A ``ScriptedProvider`` was called more times than its script has responses."""

    advice = "Give the script a reply for every model call the run makes, then run it again."


def text_reply(text: str, *, usage: Usage | None = None) -> AssistantMessage:
    """A plain text answer that ends the turn."""
    return AssistantMessage(content=[TextBlock(text=text)], stop_reason=StopReason.END_TURN,
                            usage=usage or Usage())


def tool_calls_reply(
    calls: Iterable[tuple[str, Mapping[str, Any]] | ToolUseBlock], *, text: str | None = None
) -> AssistantMessage:
    """A reply calling several tools, given as ``(name, arguments)`` pairs (ids are generated) or as
    ``ToolUseBlock``s; ``text`` is said before the calls."""
    content: list[ContentBlock] = [TextBlock(text=text)] if text else []
    for call in calls:
        if isinstance(call, ToolUseBlock):
            content.append(call)
        else:
            name, arguments = call
            content.append(ToolUseBlock(id=new_call_id(), name=name, input=dict(arguments)))
    return AssistantMessage(content=content, stop_reason=StopReason.TOOL_USE)


def tool_call_reply(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    id: str | None = None,
    text: str | None = None,
) -> AssistantMessage:
    """A reply calling one tool; ``id`` is generated (``call_<24 characters of a new id>``) unless given."""
    call = ToolUseBlock(id=id or new_call_id(), name=name, input=dict(arguments or {}))
    return tool_calls_reply([call], text=text)


# ------------------------------------------------------------------ usage estimate


def _block_chars(block: ContentBlock) -> int:
    if isinstance(block, TextBlock):
        return len(block.text)
    if isinstance(block, ThinkingBlock):
        return len(block.thinking)
    if isinstance(block, ToolUseBlock):
        return len(block.name) + len(json.dumps(block.input))
    if isinstance(block, ToolResultBlock):
        return len(block.text)
    return 0  # images: the estimate is rough by design


def _tokens(chars: int) -> int:
    # ~4 characters a token: close enough for cost tracking and budget tests to see real numbers.
    return max(1, -(-chars // 4))


def _estimate_usage(request: LLMRequest, reply: AssistantMessage) -> Usage:
    chars = len(request.system or "")
    for message in request.messages:
        blocks = message.blocks if isinstance(message, UserMessage) else message.content
        chars += sum(_block_chars(b) for b in blocks)
    for tool in request.tools:
        chars += len(tool.name) + len(tool.description) + len(json.dumps(tool.input_schema))
    output = sum(_block_chars(b) for b in reply.content)
    return Usage(input_tokens=_tokens(chars), output_tokens=_tokens(output))


# ------------------------------------------------------------------ the providers


class _ReplyingProvider(BaseProvider):
    """Answers each call with ``_reply(request)``, recorded in ``requests``, completed with this
    provider's name, a default stop reason and an estimated usage where the reply gives none."""

    def __init__(self, *, model_id: str, provider_name: str, retry_policy: RetryPolicy,
                 chunk_size: int) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, not {chunk_size}")
        super().__init__(model_id, retry_policy=retry_policy)
        self.provider_name = provider_name
        self.chunk_size = chunk_size
        #: Every request received, in order (including ones answered with an error).
        self.requests: list[LLMRequest] = []

    @property
    def calls(self) -> int:
        """How many calls were made (each retry attempt counts)."""
        return len(self.requests)

    @property
    def last_request(self) -> LLMRequest:
        if not self.requests:
            raise AssertionError(f"{type(self).__name__} has not been called yet")
        return self.requests[-1]

    async def health_check(self) -> bool:
        return True

    @abstractmethod
    async def _reply(self, request: LLMRequest) -> ScriptedReply:
        """The answer to ``request``; raise an ``LLMError`` to fail the call."""

    async def _respond(self, request: LLMRequest) -> AssistantMessage:
        self.requests.append(request)
        try:
            reply = await self._reply(request)
        except LLMError as error:
            error.provider = error.provider or self.provider_name
            error.model = error.model or self.model_id
            raise
        if isinstance(reply, str):
            reply = AssistantMessage(content=[TextBlock(text=reply)] if reply else [])
        elif not isinstance(reply, AssistantMessage):
            raise TypeError(
                f"{type(self).__name__} got a {type(reply).__name__} as a reply: a reply must be an "
                "AssistantMessage or a str (did a response function forget to return?)"
            )
        update: dict[str, Any] = {}
        if not reply.model:
            update["model"] = self.model_id
        if not reply.provider:
            update["provider"] = self.provider_name
        if reply.stop_reason is None:
            update["stop_reason"] = StopReason.TOOL_USE if reply.tool_calls else StopReason.END_TURN
        if reply.usage == Usage():
            update["usage"] = _estimate_usage(request, reply)
        return reply.model_copy(update=update) if update else reply

    async def _complete_once(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(message=await self._respond(request))

    async def _stream_once(
        self, request: LLMRequest, assembler: StreamAssembler
    ) -> AsyncIterator[StreamEvent]:
        message = await self._respond(request)
        for event in message_to_events(message, chunk_size=self.chunk_size):
            # A real stream yields to the event loop between chunks; cancellation tests rely on it.
            await anyio.lowlevel.checkpoint()
            yield event

    def _map_error(self, error: Exception) -> LLMError | None:
        return None  # anything but an LLMError is a bug in the test: let it propagate


async def _resolve(result: ScriptedReply | LLMError | Awaitable[ScriptedReply]) -> ScriptedReply:
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, LLMError):
        raise result
    return result


class ScriptedProvider(_ReplyingProvider):
    """A model that plays a script: each call consumes the next response.

    A ``str`` is a text reply; an ``AssistantMessage`` is returned as given (its empty ``model`` and
    ``provider`` filled in, ``stop_reason`` defaulted to TOOL_USE when it calls tools, else
    END_TURN); an ``LLMError`` fails that call (``complete()`` raises it, ``stream()`` yields it as
    an ``ErrorEvent``), so a ``RetryPolicy`` can be seen retrying; a callable gets the
    ``LLMRequest`` and returns (or awaits to) a reply. A reply without usage gets an estimate
    (~4 characters a token). Calling past the end raises ``ScriptExhaustedError``.
    """

    def __init__(
        self,
        responses: Iterable[ScriptedResponse] = (),
        *,
        model_id: str = "scripted-model",
        provider_name: str = "scripted",
        retry_policy: RetryPolicy = NO_RETRY,
        chunk_size: int = 8,
    ) -> None:
        super().__init__(model_id=model_id, provider_name=provider_name, retry_policy=retry_policy,
                         chunk_size=chunk_size)
        self._script: deque[ScriptedResponse] = deque()
        self._total = 0
        #: The script file the responses came from (``load_script``), named when the script runs out.
        self.source: str | None = None
        self.add(*responses)

    def add(self, *responses: ScriptedResponse) -> None:
        """Append responses to the script."""
        for response in responses:
            if not (isinstance(response, AssistantMessage | str | LLMError) or callable(response)):
                raise TypeError(
                    f"script entry {self._total + 1} is a {type(response).__name__}: use an "
                    "AssistantMessage, a str, an LLMError or a callable taking the LLMRequest"
                )
            self._script.append(response)
            self._total += 1

    @property
    def remaining(self) -> int:
        """Responses not yet consumed."""
        return len(self._script)

    async def _reply(self, request: LLMRequest) -> ScriptedReply:
        if not self._script:
            held = f"{self._total} repl{'y' if self._total == 1 else 'ies'}"
            raise ScriptExhaustedError(
                f"the script ran out: model call {self.calls} was made, but "
                + (f"the script file {self.source} holds only {held}" if self.source else
                   f"the script held only {held}; add more to ScriptedProvider([...]) or with .add(...)"),
                provider=self.provider_name, model=self.model_id,
            )
        response = self._script.popleft()
        if isinstance(response, LLMError):
            raise response
        if isinstance(response, AssistantMessage | str):
            return response
        return await _resolve(response(request))


class FunctionProvider(_ReplyingProvider):
    """A model that is a function: ``fn(messages, tools)`` returns (or awaits to) an
    ``AssistantMessage`` or a ``str``, and may raise an ``LLMError``. Useful when the answer depends
    on the conversation, e.g. echoing the last tool result. A sync ``fn`` is called directly."""

    def __init__(
        self,
        fn: ReplyFunction,
        *,
        model_id: str = "function-model",
        provider_name: str = "function",
        retry_policy: RetryPolicy = NO_RETRY,
        chunk_size: int = 8,
    ) -> None:
        super().__init__(model_id=model_id, provider_name=provider_name, retry_policy=retry_policy,
                         chunk_size=chunk_size)
        self.fn = fn

    async def _reply(self, request: LLMRequest) -> ScriptedReply:
        return await _resolve(self.fn(list(request.messages), list(request.tools)))
