"""Provider-neutral message and content types.

Everything here is a frozen pydantic model that round-trips through JSON: sessions are persisted,
replayed and handed from one vendor to another, so no vendor object ever leaks past a provider.
Unions are discriminated on a ``type`` (content blocks) or ``role`` (messages) literal.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agcore.llm._images import MAX_IMAGE_BYTES, read_image

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "ImageBlock",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "ProviderBlock",
    "ResponseFormat",
    "StopReason",
    "TextBlock",
    "ThinkingBlock",
    "ToolChoice",
    "ToolDefinition",
    "ToolResultBlock",
    "ToolResultContent",
    "ToolUseBlock",
    "Usage",
    "UserMessage",
]


class _Frozen(BaseModel):
    # defer_build: a model's validator is built when it is first used, not at import (issue 4's
    # import budget), and a run builds only the models it validates.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class TextBlock(_Frozen):
    """Plain text in a message."""

    type: Literal["text"] = "text"
    text: str


class ImageBlock(_Frozen):
    """An image given inline as base64 ``data`` (with its ``media_type``) or by ``url``."""

    type: Literal["image"] = "image"
    media_type: str | None = None
    data: str | None = None
    url: str | None = None

    @model_validator(mode="after")
    def _exactly_one_source(self) -> Self:
        if (self.data is None) == (self.url is None):
            raise ValueError("an ImageBlock needs exactly one of `data` (base64) or `url`")
        if self.data is not None and not self.media_type:
            raise ValueError("a base64 ImageBlock needs its `media_type`, e.g. 'image/png'")
        return self

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], *, max_bytes: int = MAX_IMAGE_BYTES) -> ImageBlock:
        """The image file at ``path``, inline: its media type read from its bytes (PNG, JPEG, GIF,
        WebP). ``ImageFileError`` (a ``ValueError``) when it is missing, over ``max_bytes`` (default
        5 MB, Anthropic's limit) or another format."""
        media_type, data = read_image(path, max_bytes=max_bytes)
        return cls(media_type=media_type, data=data)


class ThinkingBlock(_Frozen):
    """Model reasoning. ``provider`` says whose it is: a signature is only valid for that vendor.

    ``redacted_data`` holds an encrypted (redacted) thinking payload, which has no readable text.
    """

    type: Literal["thinking"] = "thinking"
    thinking: str = ""
    signature: str | None = None
    redacted_data: str | None = None
    provider: str | None = None


class ToolUseBlock(_Frozen):
    """A tool call. ``parse_error`` is set when the model's argument JSON could not be read even after
    repair: ``input`` is then empty and the loop answers the call with an error result."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    parse_error: str | None = None


class ProviderBlock(_Frozen):
    """A content block only its vendor understands, kept as the vendor sent it (``data``) so the
    history replays to that vendor unchanged: Anthropic's server-tool blocks (``server_tool_use``,
    ``web_search_tool_result``, ``code_execution_tool_result``...). Other providers leave it out
    (its outcome is in the text that follows it)."""

    type: Literal["provider"] = "provider"
    provider: str
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        """The vendor's type for the block (``data["type"]``), e.g. ``"web_search_tool_result"``."""
        kind = self.data.get("type")
        return kind if isinstance(kind, str) else ""


ToolResultContent = Annotated[TextBlock | ImageBlock, Field(discriminator="type")]


class ToolResultBlock(_Frozen):
    """The result of the tool call ``tool_use_id``: text or text/image blocks; ``is_error`` when the call
    failed (the model reads the text as the error)."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str | list[ToolResultContent] = ""
    is_error: bool = False

    @property
    def text(self) -> str:
        """The result's text blocks joined (images left out)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))


ContentBlock = Annotated[
    TextBlock | ImageBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock | ProviderBlock,
    Field(discriminator="type"),
]


class StopReason(StrEnum):
    """Why the model stopped: it finished (``end_turn``), called tools (``tool_use``), hit ``max_tokens``
    or a stop sequence, refused (``refusal``), or paused a long turn (``pause``)."""

    END_TURN = "end_turn"
    TOOL_USE = "tool_use"
    MAX_TOKENS = "max_tokens"
    STOP_SEQUENCE = "stop_sequence"
    REFUSAL = "refusal"
    PAUSE = "pause"


class Usage(_Frozen):
    """Token counts. ``input_tokens`` excludes cache reads and writes, as Anthropic reports it;
    providers whose vendor includes them (OpenAI) subtract, so totals add up the same everywhere.

    ``reasoning_tokens`` is the part of ``output_tokens`` the model spent reasoning, where the vendor
    says (OpenAI's and DeepSeek's ``completion_tokens_details.reasoning_tokens``). It is *included* in
    ``output_tokens`` (vendors bill reasoning as output), so it is never priced or totalled twice;
    it is 0 where the vendor does not report it apart (Anthropic counts thinking in its output
    tokens without a breakdown, Ollama reports no breakdown)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """All the tokens counted: input, output (reasoning included), cache reads and cache writes."""
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens


class UserMessage(_Frozen):
    """What the user (or the application) says: a string, or blocks (text, images, and the results of the
    previous reply's tool calls)."""

    role: Literal["user"] = "user"
    content: str | list[ContentBlock]

    @property
    def blocks(self) -> list[ContentBlock]:
        """The content as blocks (a string content is one ``TextBlock``)."""
        return [TextBlock(text=self.content)] if isinstance(self.content, str) else list(self.content)

    @property
    def text(self) -> str:
        """What the user wrote: the string content, or the text blocks joined (images and tool results
        left out)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        """The tool results the message carries, in order."""
        return [b for b in self.blocks if isinstance(b, ToolResultBlock)]

    @classmethod
    def with_images(
        cls, text: str, images: Iterable[str | os.PathLike[str] | ImageBlock], *,
        max_bytes: int = MAX_IMAGE_BYTES,
    ) -> UserMessage:
        """``text`` with images: each a path (read by ``ImageBlock.from_path``) or an ``ImageBlock``.
        The images come first, then the text, the order the vendors recommend."""
        blocks: list[ContentBlock] = [
            image if isinstance(image, ImageBlock) else ImageBlock.from_path(image, max_bytes=max_bytes)
            for image in images
        ]
        if text:
            blocks.append(TextBlock(text=text))
        return cls(content=blocks)


class AssistantMessage(_Frozen):
    """What a model said, with who said it (``provider``/``model``) so history can be handed off."""

    role: Literal["assistant"] = "assistant"
    content: list[ContentBlock] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    model: str = ""
    provider: str = ""
    usage: Usage = Field(default_factory=Usage)

    @property
    def text(self) -> str:
        """The reply's text blocks joined (thinking and tool calls left out)."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        """The tool calls in the reply, in the model's order."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def thinking(self) -> list[ThinkingBlock]:
        """The reasoning blocks of the reply (models that return their thinking only)."""
        return [b for b in self.content if isinstance(b, ThinkingBlock)]


Message = Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]


#: The name each family of Anthropic's built-in tools is called by (the API requires that name).
_BUILTIN_NAMES = (
    ("text_editor_20250124", "str_replace_editor"),
    ("text_editor_20241022", "str_replace_editor"),
    ("text_editor_", "str_replace_based_edit_tool"),
    ("bash_", "bash"),
    ("web_search_", "web_search"),
    ("web_fetch_", "web_fetch"),
    ("code_execution_", "code_execution"),
    ("computer_", "computer"),
    ("memory_", "memory"),
)


class ToolDefinition(_Frozen):
    """What the model is told about a tool: ``input_schema`` is a JSON Schema object.

    A vendor's built-in tool is offered by its type instead (``builtin_type``, e.g. Anthropic's
    ``web_search_20250305`` or ``bash_20250124``, with its settings in ``builtin_options``): the
    vendor knows its schema. Build one with ``ToolDefinition.builtin(...)``. Server tools (web search,
    code execution) run at the vendor; client ones (bash, text editor) come back as ordinary tool
    calls for a tool of that name. A provider that has no such tool refuses the request.
    """

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    builtin_type: str | None = None
    builtin_options: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def builtin(cls, builtin_type: str, *, name: str | None = None, **options: Any) -> ToolDefinition:
        """A vendor's built-in tool by type: ``ToolDefinition.builtin("web_search_20250305",
        max_uses=3)``. ``name`` defaults to the one the vendor requires for that type
        (``web_search``, ``bash``, ``str_replace_based_edit_tool``...); ``options`` are the tool's
        settings, sent as they are (``max_uses``, ``allowed_domains``, ``max_characters``...)."""
        if name is None:
            name = next((n for prefix, n in _BUILTIN_NAMES if builtin_type.startswith(prefix)), None)
            if name is None:
                raise ValueError(f"no default name for built-in tool type {builtin_type!r}: pass name=...")
        return cls(name=name, builtin_type=builtin_type, builtin_options=dict(options))


class ToolChoice(_Frozen):
    """``auto`` (model decides), ``any`` (must call some tool), ``none`` (no tools), or ``tool`` (must
    call ``name``). Plain strings ``"auto"``, ``"any"``, ``"none"`` are accepted wherever one is."""

    mode: Literal["auto", "any", "none", "tool"] = "auto"
    name: str | None = None

    @model_validator(mode="after")
    def _name_iff_tool(self) -> Self:
        if (self.mode == "tool") != (self.name is not None):
            raise ValueError("ToolChoice needs `name` exactly when mode is 'tool'")
        return self

    @classmethod
    def coerce(cls, value: ToolChoice | str | None) -> ToolChoice | None:
        """A ``ToolChoice`` from a ``ToolChoice``, None, or ``"auto"``/``"any"``/``"none"``. Raises
        ``ValueError`` for any other string."""
        if value is None or isinstance(value, ToolChoice):
            return value
        if value in ("auto", "any", "none"):
            return cls(mode=value)
        raise ValueError(f"unknown tool_choice {value!r}: use 'auto', 'any', 'none' or ToolChoice(...)")


class ResponseFormat(_Frozen):
    """A JSON Schema the model's text answer must follow (structured output), for vendors that
    constrain it natively: OpenAI's ``response_format`` (``json_schema``; ``strict`` only where the
    schema allows it), Ollama's ``format``, Anthropic's ``output_config.format``. ``json_schema``
    describes a JSON object; ``name`` and ``description`` tell the model what the answer is."""

    type: Literal["json_schema"] = "json_schema"
    name: str = "final_result"
    description: str | None = None
    json_schema: dict[str, Any]
    strict: bool = False


class LLMRequest(_Frozen):
    """One model call, as every provider receives it (``provider.complete(request)``). Hooks may
    rewrite it (``model_copy(update=...)``). Plain data: it round-trips through JSON, so a durable
    runtime can send it to a worker.

    ``extra`` is passed through to the vendor request body unchanged (e.g. ``{"top_p": 0.9}`` or
    Anthropic's ``{"thinking": {...}}``), for options agcore does not model; ``headers`` are extra
    HTTP headers for this call.
    """

    messages: list[Message]
    system: str | None = None
    tools: list[ToolDefinition] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stop_sequences: list[str] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    #: Extra HTTP headers for this call (e.g. ``{"anthropic-beta": "..."}``), on top of the
    #: provider's own; an ``anthropic-beta`` list adds to the provider's rather than replacing it.
    headers: dict[str, str] = Field(default_factory=dict)
    #: Constrain the text answer to a JSON Schema (None: free text); see ``ResponseFormat``.
    response_format: ResponseFormat | None = None

    @classmethod
    def build(
        cls,
        messages: str | Sequence[UserMessage | AssistantMessage],
        *,
        system: str | None = None,
        tools: Sequence[ToolDefinition] | None = None,
        tool_choice: ToolChoice | str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        response_format: ResponseFormat | None = None,
    ) -> LLMRequest:
        """A request from keywords: the one convenience form (``provider.complete(LLMRequest.build(
        "Hi", max_tokens=50))``). ``messages`` may be a plain string: one user message. The parts
        must already be agcore models (they are not validated again)."""
        if isinstance(messages, str):
            messages = [UserMessage(content=messages)]
        elif isinstance(messages, UserMessage | AssistantMessage):
            raise TypeError(
                "LLMRequest.build takes a string or a list of messages, not one message: "
                "LLMRequest.build([message])"
            )
        # model_construct: the parts are already validated models, and this runs on every call.
        return cls.model_construct(
            messages=list(messages),
            system=system,
            tools=list(tools or ()),
            tool_choice=ToolChoice.coerce(tool_choice),
            max_tokens=max_tokens,
            temperature=temperature,
            stop_sequences=list(stop_sequences or ()),
            extra=dict(extra or {}),
            headers=dict(headers or {}),
            response_format=response_format,
        )


class LLMResponse(_Frozen):
    """A provider's reply to one ``LLMRequest``: the ``message`` and the vendor's ``request_id`` (quote
    it to the vendor's support)."""

    message: AssistantMessage
    request_id: str | None = None

    @property
    def text(self) -> str:
        """The reply's text (``message.text``)."""
        return self.message.text

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        """The tool calls in the reply (``message.tool_calls``)."""
        return self.message.tool_calls

    @property
    def usage(self) -> Usage:
        """The tokens the call used (``message.usage``)."""
        return self.message.usage

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the model stopped (``message.stop_reason``)."""
        return self.message.stop_reason
