"""A stream answered with the whole reply as JSON, as a server or gateway that ignores
``"stream": true`` sends it. Found by issue 17's fault campaign: read as SSE it held no event, so it
was reported as a broken stream and retried (in vain: the server answers the same way every time).
Now the reply is taken as it is, the same message ``complete()`` gives."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import respx

from agcore.llm.events import ErrorEvent
from tests.llm.test_tool_argument_shapes import (
    CITY,
    REQUEST,
    SHAPES,
    anthropic,
    anthropic_reply,
    check,
    openai,
    openai_reply,
    streamed,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=True) as mock:
        yield mock


async def test_anthropic_stream_answered_with_json(router: respx.MockRouter) -> None:
    route = router.post("https://api.anthropic.com/v1/messages").mock(
        return_value=httpx.Response(200, json=anthropic_reply(CITY)))
    message = await streamed(anthropic())
    assert route.call_count == 1
    check(message, SHAPES[0])
    assert message == (await anthropic().complete(REQUEST)).message


async def test_openai_stream_answered_with_json(router: respx.MockRouter) -> None:
    route = router.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=openai_reply('{"city": "Paris"}')))
    message = await streamed(openai())
    assert route.call_count == 1
    check(message, SHAPES[0])
    assert message == (await openai().complete(REQUEST)).message


async def test_openai_stream_answered_with_a_json_error_body(router: respx.MockRouter) -> None:
    body = {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}
    router.post("https://api.openai.com/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=body))
    events = [e async for e in openai().stream(REQUEST)]
    error = events[-1]
    assert isinstance(error, ErrorEvent)
    assert error.error_type == "RateLimitError"
