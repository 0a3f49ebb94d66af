"""The checkpoints' serializer: agcore's own values as agcore's own JSON, the rest as LangGraph's.

Every graph step checkpoints what it wrote, and in a tool-call turn most of that is agcore's: the
messages each node appended (``messages``) and the turn's input (a ``UserMessage``). LangGraph's
``JsonPlusSerializer`` encodes a pydantic model generically: a Python callback per model that dumps
it to a dict and packs that again with its class path. Measured on the LangGraph benchmark's
tool-call turn: ~70 µs a turn for its four messages and the input, 1.7% of the turn. Here a list of
messages is ``messages_to_json`` (pydantic's own encoder, the format every ``SessionStore`` writes)
and any other agcore model its ``model_dump_json``: a quarter to a half of the time to write and to
read (4 messages: 39 -> 16 µs to write, 47 -> 16 to read; 1 message: 6.6 -> 1.7).

Everything else, and every value written before, goes through ``JsonPlusSerializer`` as always. As
in a ``SessionStore``, a message's free-form data is JSON (a ``SystemEvent``'s set comes back a
list); a value JSON cannot write at all (bytes that are not UTF-8) falls back to
``JsonPlusSerializer``. Loading names only agcore's state types (``state_types``): a checkpoint
cannot make this serializer build any other class.
"""

from __future__ import annotations

from functools import cache
from typing import Any, get_args

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from agcore.agent import AgentMessage, messages_from_json, messages_to_json
from agcore.integrations.langgraph._state import state_types

__all__ = ["AgentSerializer", "MESSAGES_TYPE", "MODEL_TYPE_PREFIX"]

#: The type tag of a list of ``AgentMessage``s (``messages_to_json``).
MESSAGES_TYPE = "agcore.messages"
#: The type tag of one agcore model: this prefix, then ``module:Class``.
MODEL_TYPE_PREFIX = "agcore.model:"

#: The classes of ``AgentMessage`` (the union's members).
_MESSAGE_CLASSES: frozenset[type] = frozenset(get_args(get_args(AgentMessage)[0]))


@cache
def _models() -> dict[str, type[BaseModel]]:
    """The agcore models a state can hold, by their type tag."""
    return {
        f"{MODEL_TYPE_PREFIX}{typ.__module__}:{typ.__name__}": typ
        for typ in state_types()
        if issubclass(typ, BaseModel)
    }


@cache
def _tags() -> dict[type, str]:
    return {typ: tag for tag, typ in _models().items()}


class AgentSerializer(JsonPlusSerializer):
    """LangGraph's ``JsonPlusSerializer``, writing agcore's values as agcore's own JSON: a list of
    ``AgentMessage``s as ``messages_to_json`` (the format a ``SessionStore`` writes) and any other
    agcore state model as its ``model_dump_json``, a quarter to a half of the time of the generic
    pydantic encoding. Everything else, and checkpoints written before, go through
    ``JsonPlusSerializer`` with its settings (the msgpack allowlist). Loading builds only agcore's
    state types. ``typed_checkpointer`` puts it on a stock saver."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """``(type tag, bytes)`` of ``obj``: agcore's JSON for its messages and models, else
        ``JsonPlusSerializer``'s (also when JSON cannot hold a message's free-form data)."""
        kind = type(obj)
        try:
            if kind is list and obj and all(type(item) in _MESSAGE_CLASSES for item in obj):
                return MESSAGES_TYPE, messages_to_json(obj)
            tag = _tags().get(kind)
            if tag is not None:
                return tag, obj.model_dump_json().encode()
        except PydanticSerializationError:  # e.g. a SystemEvent's free-form data holding a set
            pass
        return super().dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """The value ``dumps_typed`` wrote (or ``JsonPlusSerializer`` did); ``ValueError`` for an
        agcore tag naming a class that is not one of this version's state types."""
        tag, payload = data
        if tag == MESSAGES_TYPE:
            return messages_from_json(payload)
        if tag.startswith(MODEL_TYPE_PREFIX):
            model = _models().get(tag)
            if model is None:
                raise ValueError(
                    f"the checkpoint holds {tag!r}, which is not one of agcore's state types in this "
                    "version: load it with the agcore version that wrote it"
                )
            return model.model_validate_json(payload)
        return super().loads_typed(data)
