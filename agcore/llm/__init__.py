"""agcore's provider-neutral LLM layer: types, stream events, errors, retry, model registry, providers.

Vendor SDKs are imported only when their provider is first used, so ``import agcore.llm`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr
from agcore.llm._arguments import CUT_AT_MAX_TOKENS, parse_tool_arguments
from agcore.llm._assembly import StreamAssembler, message_to_events
from agcore.llm._identifiers import fit_identifier, new_call_id
from agcore.llm._images import IMAGE_MEDIA_TYPES, MAX_IMAGE_BYTES, ImageFileError
from agcore.llm._lenient_json import read_lenient_object
from agcore.llm._local_server import LocalServer, detect_local_server, forget_local_servers
from agcore.llm._loop_bound import LoopBound
from agcore.llm._urls import check_base_url
from agcore.llm.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    InvalidRequestError,
    LLMConnectionError,
    LLMError,
    MissingCredentialsError,
    ModelNotFoundError,
    OverloadedError,
    RateLimitError,
    RequestTimeoutError,
    ResponseFormatError,
    ServerError,
    ServerNotRunningError,
    StreamInterruptedError,
)
from agcore.llm.events import (
    DoneEvent,
    ErrorEvent,
    ProviderBlockEnd,
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
from agcore.llm.factory import (
    clear_provider_cache,
    create_provider,
    parse_model_spec,
    register_provider_factory,
)
from agcore.llm.models import (
    ModelInfo,
    ModelRegistry,
    UnknownModelWarning,
    cost_usd,
    default_registry,
    get_model_info,
    register_model,
)
from agcore.llm.provider import BaseProvider, LLMProvider
from agcore.llm.retry import NO_RETRY, RetryPolicy
from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    LLMRequest,
    LLMResponse,
    Message,
    ProviderBlock,
    ResponseFormat,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    ToolDefinition,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    from agcore.llm.providers.anthropic import AnthropicProvider
    from agcore.llm.providers.ollama import OllamaProvider
    from agcore.llm.providers.openai import OpenAIProvider
    from agcore.llm.providers.openai_responses import OpenAIResponsesProvider

_LAZY = {
    "AnthropicProvider": "agcore.llm.providers.anthropic",
    "OpenAIProvider": "agcore.llm.providers.openai",
    "OpenAIResponsesProvider": "agcore.llm.providers.openai_responses",
    "OllamaProvider": "agcore.llm.providers.ollama",
}


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, _LAZY)


__all__ = [
    "detect_local_server",
    "forget_local_servers",
    "CUT_AT_MAX_TOKENS",
    "IMAGE_MEDIA_TYPES",
    "MAX_IMAGE_BYTES",
    "ImageFileError",
    "NO_RETRY",
    "AnthropicProvider",
    "AssistantMessage",
    "AuthenticationError",
    "BaseProvider",
    "ContentBlock",
    "ContextWindowExceededError",
    "DoneEvent",
    "ErrorEvent",
    "ImageBlock",
    "InvalidRequestError",
    "LLMConnectionError",
    "LLMError",
    "LoopBound",
    "LLMProvider",
    "LocalServer",
    "LLMRequest",
    "LLMResponse",
    "Message",
    "MissingCredentialsError",
    "ModelInfo",
    "ModelNotFoundError",
    "ModelRegistry",
    "UnknownModelWarning",
    "OllamaProvider",
    "OpenAIProvider",
    "OpenAIResponsesProvider",
    "OverloadedError",
    "ProviderBlock",
    "ProviderBlockEnd",
    "RateLimitError",
    "RequestTimeoutError",
    "ResponseFormat",
    "ResponseFormatError",
    "RetryPolicy",
    "ServerError",
    "ServerNotRunningError",
    "StopReason",
    "StreamAssembler",
    "check_base_url",
    "fit_identifier",
    "new_call_id",
    "StreamEvent",
    "StreamInterruptedError",
    "TextBlock",
    "TextDelta",
    "TextEnd",
    "TextStart",
    "ThinkingBlock",
    "ThinkingDelta",
    "ThinkingEnd",
    "ThinkingStart",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolChoice",
    "ToolDefinition",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
    "UsageEvent",
    "UserMessage",
    "clear_provider_cache",
    "cost_usd",
    "create_provider",
    "default_registry",
    "get_model_info",
    "message_to_events",
    "parse_model_spec",
    "parse_tool_arguments",
    "read_lenient_object",
    "register_model",
    "register_provider_factory",
]
