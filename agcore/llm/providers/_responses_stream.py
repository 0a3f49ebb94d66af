"""Reading a Responses API stream: the SSE events (``response.output_item.added``,
``response.output_text.delta``, ``response.function_call_arguments.delta``,
``response.output_item.done``, ``response.completed``...) to agcore stream events.

Deltas are passed on as they come; each block is finished from the complete item that
``response.output_item.done`` carries, converted by the same function ``complete()`` uses, so a
stream and a complete call give the same message. Block indexes are taken in order of appearance; a
message item gets one at its first text, so an empty message takes no index, as in ``complete()``.
"""

from __future__ import annotations

import json
from typing import Any

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
from agcore.llm.providers._openai_wire import arguments_text, error_from_body, new_call_id
from agcore.llm.providers._responses_wire import (
    block_from_item,
    failure_of,
    is_refusal,
    stop_reason_of,
    usage_of,
)
from agcore.llm.types import StopReason, TextBlock, ThinkingBlock, ToolUseBlock

__all__ = ["ResponseEventReader"]

_TEXT_DELTAS = ("response.output_text.delta", "response.refusal.delta")
_THINKING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")
_FINISHED = ("response.completed", "response.incomplete")


class _Item:
    __slots__ = ("call_id", "done", "index", "kind", "summary_index")

    def __init__(self, kind: object, call_id: str | None = None) -> None:
        self.kind = kind
        self.index: int | None = None  # the block index, once the block has started
        self.call_id = call_id
        self.summary_index: object = None  # the reasoning summary part deltas last went to
        self.done = False


class ResponseEventReader:
    """Turns decoded SSE event payloads into agcore events; ``finished`` once the response completed
    (or ended incomplete), after which ``stop_reason()`` says why."""

    __slots__ = ("_by_id", "_items", "_model", "_next", "_provider", "_refused", "_response",
                 "_tool_calls", "finished")

    def __init__(self, provider: str, model: str) -> None:
        self._provider = provider
        self._model = model
        self._next = 0
        self._items: dict[object, _Item] = {}  # by output_index
        self._by_id: dict[str, _Item] = {}  # by item id, for events that lack output_index
        self._refused = False
        self._tool_calls = False
        self._response: dict[str, Any] = {}
        self.finished = False

    def read(self, payload: bytes) -> list[StreamEvent]:
        if not payload or payload == b"[DONE]":  # no [DONE] in this API, but gateways add one
            return []
        event = json.loads(payload)
        if not isinstance(event, dict) or self.finished:
            return []
        kind = event.get("type")
        events: list[StreamEvent] = []
        if kind in _TEXT_DELTAS:
            self._text_delta(event, events)
        elif kind == "response.function_call_arguments.delta":
            item = self._item(event)
            delta = event.get("delta")
            if item is not None and item.index is not None and isinstance(delta, str) and delta:
                events.append(ToolCallDelta(index=item.index, arguments=delta))
        elif kind in _THINKING_DELTAS:
            self._thinking_delta(event, events)
        elif kind == "response.output_item.added":
            self._added(event, events)
        elif kind == "response.output_item.done":
            output = event.get("item")
            if isinstance(output, dict):
                self._done(event.get("output_index"), output, events)
        elif kind in _FINISHED:
            self._finish(event.get("response"), events)
        elif kind == "response.failed":
            response = event.get("response")
            failure = failure_of(response if isinstance(response, dict) else {"status": "failed"},
                                 provider=self._provider, model=self._model)
            if failure is not None:
                raise failure
        elif kind == "error":  # a failure after the stream started: rate limits, server errors
            # Flat (code, message, param) as the API documents it; some gateways nest an error object.
            nested = event.get("error")
            raise error_from_body(nested if isinstance(nested, dict) else event, provider=self._provider,
                                  model=self._model)
        # response.created / in_progress / content_part.* / *.done of parts carry nothing new here.
        return events

    def stop_reason(self) -> StopReason:
        return stop_reason_of(self._response, has_tool_calls=self._tool_calls, refused=self._refused)

    # ----------------------------------------------------------------- internals

    def _take_index(self) -> int:
        index = self._next
        self._next += 1
        return index

    def _item(self, event: dict[str, Any]) -> _Item | None:
        item = self._items.get(event.get("output_index"))
        if item is None and isinstance(item_id := event.get("item_id"), str):
            item = self._by_id.get(item_id)
        return item

    def _register(self, output_index: object, output: dict[str, Any]) -> _Item:
        call_id = output.get("call_id")
        item = _Item(output.get("type"), call_id if isinstance(call_id, str) and call_id else None)
        self._items[output_index] = item
        if isinstance(item_id := output.get("id"), str) and item_id:
            self._by_id[item_id] = item
        return item

    def _added(self, event: dict[str, Any], events: list[StreamEvent]) -> None:
        output = event.get("item")
        if not isinstance(output, dict):
            return
        item = self._register(event.get("output_index"), output)
        if item.kind == "function_call":
            item.call_id = item.call_id or new_call_id()
            item.index = self._take_index()
            name = output.get("name")
            events.append(ToolCallStart(index=item.index, id=item.call_id,
                                        name=name if isinstance(name, str) else ""))
            if arguments := arguments_text(output.get("arguments")):
                events.append(ToolCallDelta(index=item.index, arguments=arguments))
        elif item.kind == "reasoning":
            item.index = self._take_index()
            events.append(ThinkingStart(index=item.index))

    def _text_delta(self, event: dict[str, Any], events: list[StreamEvent]) -> None:
        item = self._item(event)
        delta = event.get("delta")
        if item is None or not isinstance(delta, str) or not delta:
            return
        if event.get("type") == "response.refusal.delta":
            self._refused = True
        if item.index is None:
            item.index = self._take_index()
            events.append(TextStart(index=item.index))
        events.append(TextDelta(index=item.index, text=delta))

    def _thinking_delta(self, event: dict[str, Any], events: list[StreamEvent]) -> None:
        item = self._item(event)
        delta = event.get("delta")
        if item is None or item.index is None or not isinstance(delta, str) or not delta:
            return
        part = event.get("summary_index", event.get("content_index"))
        if item.summary_index is not None and part != item.summary_index:
            delta = "\n\n" + delta  # the parts are joined so in the finished block too
        item.summary_index = part
        events.append(ThinkingDelta(index=item.index, thinking=delta))

    def _done(self, output_index: object, output: dict[str, Any], events: list[StreamEvent]) -> None:
        item = self._items.get(output_index) or self._register(output_index, output)
        if item.done:
            return
        item.done = True
        block = block_from_item(output, provider=self._provider, call_id=item.call_id)
        if isinstance(block, TextBlock):
            self._refused = self._refused or is_refusal(output)
            if item.index is None:  # a server that sent the message whole, without deltas
                item.index = self._take_index()
                events.append(TextStart(index=item.index))
                events.append(TextDelta(index=item.index, text=block.text))
            events.append(TextEnd(index=item.index, text=block.text))
        elif isinstance(block, ToolUseBlock):
            self._tool_calls = True
            if item.index is None:
                item.index = self._take_index()
                events.append(ToolCallStart(index=item.index, id=block.id, name=block.name))
            elif block.id != item.call_id and item.call_id is not None:
                block = block.model_copy(update={"id": item.call_id})  # the id its start announced
            events.append(ToolCallEnd(index=item.index, tool_call=block))
        elif isinstance(block, ThinkingBlock):
            if item.index is None:
                item.index = self._take_index()
                events.append(ThinkingStart(index=item.index))
            events.append(ThinkingEnd(index=item.index, block=block))

    def _finish(self, response: object, events: list[StreamEvent]) -> None:
        self.finished = True
        self._response = response if isinstance(response, dict) else {}
        output = self._response.get("output")
        # Items the stream never closed (a server that skips output_item.done) end from the final list.
        for position, output_item in enumerate(output if isinstance(output, list) else ()):
            if isinstance(output_item, dict):
                self._done(position, output_item, events)
        events.append(UsageEvent(usage=usage_of(self._response.get("usage"))))
