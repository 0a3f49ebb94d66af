"""Reading a Chat Completions stream: SSE payloads out of the response bytes, agcore events out of
the decoded chunks.

Per-chunk work here is what streaming costs on top of the HTTP client, so the common chunks (one
more piece of an open text block or of a started call's arguments) take short paths, and chunks are
read as plain dicts: building the SDK's models for each would cost several times as much.
"""

from __future__ import annotations

import json
from typing import Any

from agcore.llm._arguments import parse_tool_arguments
from agcore.llm.events import (
    StreamEvent,
    TextDelta,
    TextEnd,
    TextStart,
    ThinkingDelta,
    ThinkingEnd,
    ThinkingStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from agcore.llm.providers._openai_wire import (
    arguments_text,
    error_from_body,
    new_call_id,
    reasoning_of,
    stop_reason_for,
    text_of,
    usage_from,
)
from agcore.llm.providers._think_tags import Piece, ThinkTagSplitter
from agcore.llm.types import StopReason, ThinkingBlock, ToolUseBlock

__all__ = ["ChunkReader", "SSEDecoder"]


class SSEDecoder:
    """Splits a server-sent-event byte stream into its ``data`` payloads. Byte-based, as the SDK's
    is: str.splitlines would also break on U+2028 and friends, which JSON may carry unescaped."""

    __slots__ = ("_data", "_rest")

    def __init__(self) -> None:
        self._rest = b""
        self._data: list[bytes] = []

    def feed(self, piece: bytes) -> list[bytes]:
        lines = (self._rest + piece if self._rest else piece).splitlines(keepends=True)
        # A line not yet ended by "\n" may continue (or be a "\r" whose "\n" comes next): keep it.
        self._rest = lines.pop() if lines and lines[-1][-1:] != b"\n" else b""
        payloads: list[bytes] = []
        data = self._data
        for line in lines:
            if line.startswith(b"data:"):
                data.append(line[5:].strip())
            elif data and line in _BLANK:  # a blank line ends the event
                payloads.append(data[0] if len(data) == 1 else b"\n".join(data))
                data.clear()
            # Comments (":...") and the event/id/retry fields carry nothing Chat Completions uses.
        return payloads

    def flush(self) -> list[bytes]:
        """At end of stream: an unterminated event is dropped, as the SSE spec says (it is most
        likely cut off), except a lone ``[DONE]``, which some servers send without the blank line."""
        pending = self.feed(b"\n") if self._rest else []
        if self._data == [b"[DONE]"]:
            pending.append(b"[DONE]")
        self._data.clear()
        return pending


_BLANK = (b"\n", b"\r\n", b"\r")


class _Call:
    __slots__ = ("id", "index", "name", "parts", "pending", "started", "wire_index")

    def __init__(self, index: int, call_id: str, wire_index: int | None = None) -> None:
        self.index = index
        self.wire_index = wire_index  # the server's index for the call, if it gave one
        self.id = call_id
        self.name = ""
        self.parts: list[str] = []
        self.pending: list[str] = []  # argument fragments seen before the name (rare)
        self.started = False


class ChunkReader:
    """Turns decoded chunks into agcore events. Block indexes follow first appearance: thinking, text,
    tool calls in the order the server introduced them, which is the order ``complete()`` uses.

    Tool-call deltas are matched to their call by ``index``, falling back to ``id`` (servers that omit
    the index, or reuse one index for several calls) and then to the latest call."""

    __slots__ = ("_by_id", "_by_index", "_calls", "_model", "_next", "_provider", "_refused",
                 "_text_index", "_text_parts", "_think_tags", "_thinking_index", "_thinking_parts",
                 "finish_reason", "finished", "saw_done")

    def __init__(self, provider: str, model: str) -> None:
        self._provider = provider
        self._model = model
        self._next = 0
        self._thinking_index: int | None = None
        self._thinking_parts: list[str] = []
        self._text_index: int | None = None
        self._text_parts: list[str] = []
        self._think_tags = ThinkTagSplitter()  # <think> blocks a server leaves in the content
        self._calls: list[_Call] = []
        self._by_index: dict[object, _Call] = {}
        self._by_id: dict[str, _Call] = {}
        self._refused = False
        self.finish_reason: object = None
        self.finished = False
        self.saw_done = False

    def read(self, payload: bytes) -> list[StreamEvent]:
        if payload == b"[DONE]":
            self.saw_done = True
            return []
        if not payload:  # an empty "data:" line, sent by some servers as a keep-alive
            return []
        chunk = json.loads(payload)
        if not isinstance(chunk, dict):
            return []
        if chunk.get("error"):  # OpenAI and compatible servers report late failures in the stream
            raise error_from_body(chunk["error"], provider=self._provider, model=self._model)
        events: list[StreamEvent] = []
        usage = chunk.get("usage")
        if usage:
            events.append(UsageEvent(usage=usage_from(usage)))
        choices = chunk.get("choices")
        if not choices or self.finished or not isinstance(choices, list):
            return events
        choice = choices[0]
        if not isinstance(choice, dict):
            return events
        delta = choice.get("delta")
        if delta and isinstance(delta, dict):
            # Per-chunk work is what streaming costs on top of the HTTP client: the chunks nearly
            # every stream is made of, one more piece of an open text block or of a started call's
            # arguments, take a short path; anything else goes through _read_delta.
            content = delta.get("content")
            if len(delta) == 1 and content.__class__ is str and self._text_index is not None:
                if content:
                    self._text_parts.append(content)
                    events.append(TextDelta(index=self._text_index, text=content))
            elif not (len(delta) == 1 and self._continue_arguments(delta.get("tool_calls"), events)):
                self._read_delta(delta, events)
        finish_reason = choice.get("finish_reason")
        if finish_reason:  # null (or, from some servers, "") until the choice ends
            events += self.finish(finish_reason)
        return events

    def finish(self, finish_reason: object) -> list[StreamEvent]:
        self.finish_reason = finish_reason
        self.finished = True
        events: list[StreamEvent] = []
        self._content_pieces(self._think_tags.flush(), events)
        self._end_thinking(events)
        if self._text_index is not None:
            events.append(TextEnd(index=self._text_index, text="".join(self._text_parts)))
        for call in self._calls:
            self._start_call(call, events)
            arguments, error = parse_tool_arguments("".join(call.parts))
            block = ToolUseBlock(id=call.id, name=call.name, input=arguments, parse_error=error)
            events.append(ToolCallEnd(index=call.index, tool_call=block))
        return events

    def stop_reason(self) -> StopReason:
        return stop_reason_for(self.finish_reason, has_tool_calls=bool(self._calls), refused=self._refused)

    # ----------------------------------------------------------------- internals

    def _continue_arguments(self, parts: object, events: list[StreamEvent]) -> bool:
        if parts.__class__ is not list or len(parts) != 1:
            return False
        part = parts[0]
        if part.__class__ is not dict or part.get("id"):
            return False
        call = self._by_index.get(part.get("index"))
        function = part.get("function")
        if call is None or not call.started or function.__class__ is not dict or function.get("name"):
            return False
        fragment = function.get("arguments")
        if fragment.__class__ is not str:
            return False
        if fragment:
            call.parts.append(fragment)
            events.append(ToolCallDelta(index=call.index, arguments=fragment))
        return True

    def _take_index(self) -> int:
        index = self._next
        self._next += 1
        return index

    def _read_delta(self, delta: dict[str, Any], events: list[StreamEvent]) -> None:
        reasoning = reasoning_of(delta)
        if reasoning:
            self._add_thinking(reasoning, events)
        self._content_pieces(self._think_tags.feed(text_of(delta.get("content"))), events)
        refusal = delta.get("refusal")
        if refusal and isinstance(refusal, str):
            self._refused = True
            self._add_text(refusal, events)
        parts = delta.get("tool_calls")
        legacy = delta.get("function_call")
        if (parts and isinstance(parts, list)) or (legacy and isinstance(legacy, dict)):
            self._content_pieces(self._think_tags.flush(), events)  # text comes before the calls
        if parts and isinstance(parts, list):
            self._end_thinking(events)
            many = len(parts) > 1
            for position, part in enumerate(parts):
                if isinstance(part, dict):
                    self._read_call(part, position if many else None, events)
        elif legacy and isinstance(legacy, dict):  # the pre-tools form: one call, no id, no index
            self._end_thinking(events)
            call = self._calls[0] if self._calls else self._new_call(None, None)
            self._extend_call(call, legacy, events)

    def _content_pieces(self, pieces: list[Piece], events: list[StreamEvent]) -> None:
        for kind, piece in pieces:
            if kind == "thinking":
                self._add_thinking(piece, events)
            else:
                self._add_text(piece, events)

    def _add_thinking(self, thinking: str, events: list[StreamEvent]) -> None:
        if self._thinking_index is None:
            self._thinking_index = self._take_index()
            events.append(ThinkingStart(index=self._thinking_index))
        self._thinking_parts.append(thinking)
        events.append(ThinkingDelta(index=self._thinking_index, thinking=thinking))

    def _add_text(self, text: str, events: list[StreamEvent]) -> None:
        self._end_thinking(events)
        if self._text_index is None:
            self._text_index = self._take_index()
            events.append(TextStart(index=self._text_index))
        self._text_parts.append(text)
        events.append(TextDelta(index=self._text_index, text=text))

    def _end_thinking(self, events: list[StreamEvent]) -> None:
        if self._thinking_index is None:
            return
        block = ThinkingBlock(thinking="".join(self._thinking_parts), provider=self._provider)
        events.append(ThinkingEnd(index=self._thinking_index, block=block))
        self._thinking_index = None  # reasoning arriving after this opens a new block
        self._thinking_parts = []

    def _read_call(self, part: dict[str, Any], position: int | None, events: list[StreamEvent]) -> None:
        index = part.get("index")
        if not isinstance(index, int):
            index = position
        call_id = part.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = None
        call = self._by_id.get(call_id) if call_id else None
        if (call is not None and index is not None and call.wire_index not in (None, index)
                and index not in self._by_index):
            call = None  # the id again, at a new index: a server that repeats one id for several calls
        if call is None:
            known = self._by_index.get(index) if index is not None else None
            if known is not None and not (call_id and known.id != call_id):
                call = known
            elif call_id is None and index is None and self._calls:
                call = self._calls[-1]  # no index, no id: a continuation of the latest call
            else:  # a new call (also when a server reuses an index for a call with another id)
                call = self._new_call(index, call_id)
        function = part.get("function")
        if isinstance(function, dict):
            self._extend_call(call, function, events)

    def _new_call(self, index: int | None, call_id: str | None) -> _Call:
        call = _Call(self._take_index(), call_id or new_call_id(), index)
        self._calls.append(call)
        if index is not None:
            self._by_index[index] = call
        if call_id:
            self._by_id[call_id] = call
        return call

    def _extend_call(self, call: _Call, function: dict[str, Any], events: list[StreamEvent]) -> None:
        name = function.get("name")
        if name and isinstance(name, str) and not call.name:  # some servers repeat it on every delta
            call.name = name
        fragment = arguments_text(function.get("arguments"))
        if fragment:
            call.parts.append(fragment)
            if call.started:
                events.append(ToolCallDelta(index=call.index, arguments=fragment))
            else:
                call.pending.append(fragment)
        if call.name and not call.started:
            self._start_call(call, events)

    def _start_call(self, call: _Call, events: list[StreamEvent]) -> None:
        if call.started:
            return
        call.started = True
        events.append(ToolCallStart(index=call.index, id=call.id, name=call.name))
        if call.pending:
            events.append(ToolCallDelta(index=call.index, arguments="".join(call.pending)))
            call.pending = []
