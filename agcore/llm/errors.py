"""The errors an LLM call can end in. Every provider maps its vendor's failures onto this tree, so
callers never catch a vendor SDK exception.

LLMError
├── InvalidRequestError        400, 422: the request itself is wrong; fix it before trying again
│   └── ContextWindowExceededError  the prompt is longer than the model's context window
├── AuthenticationError        401, 403: missing, wrong or unauthorised key
│   └── MissingCredentialsError     no key configured at all (names the env var to set)
├── ModelNotFoundError         404: no such model (or no access to it) at this endpoint
├── RequestTimeoutError        408 or a client-side timeout               (retryable)
├── RateLimitError             429, carries ``retry_after`` when sent     (retryable)
├── ServerError                500, 502, 503, 504 and other 5xx          (retryable)
│   └── OverloadedError        529: the vendor is overloaded               (retryable)
├── LLMConnectionError         the endpoint could not be reached          (retryable)
│   └── ServerNotRunningError  a server on this machine refused: nothing listens there (not retried)
├── StreamInterruptedError     a stream broke off before it finished      (retryable)
└── ResponseFormatError        the endpoint answered something unreadable

Every error carries ``provider``, ``model``, ``status_code``, ``request_id`` and ``retry_after``
(seconds, from ``retry-after-ms`` or ``retry-after``), and ``is_retryable`` says whether the same
request may succeed later. Where the vendor's error body says more, ``vendor_type``, ``vendor_code``
and ``vendor_param`` hold its words as sent (``invalid_request_error``, ``context_length_exceeded``,
``messages``), for code that branches on them. Messages say what to do, not only what happened.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from agcore._clock import now

__all__ = [
    "AuthenticationError",
    "ContextWindowExceededError",
    "InvalidRequestError",
    "LLMConnectionError",
    "LLMError",
    "MissingCredentialsError",
    "ModelNotFoundError",
    "OverloadedError",
    "RateLimitError",
    "RequestTimeoutError",
    "ResponseFormatError",
    "ServerError",
    "ServerNotRunningError",
    "StreamInterruptedError",
    "error_class_named",
    "connection_broke_off",
    "stream_broke_off",
    "vendor_fields",
    "error_from_status",
    "parse_retry_after",
]


class LLMError(Exception):
    """Raised when an LLM call fails; every provider maps its vendor's failures onto this class's
    subclasses, so callers never catch a vendor SDK exception. Each carries ``provider``, ``model``,
    ``status_code``, ``request_id`` and ``retry_after`` (seconds); ``is_retryable`` says whether the
    same request may succeed later (the retry layer retries those).

    ``vendor_type``, ``vendor_code`` and ``vendor_param`` are the vendor's own ``type``, ``code`` and
    ``param`` from its error body (None where it sent none): Anthropic's ``overloaded_error``, OpenAI's
    ``invalid_request_error`` / ``context_length_exceeded`` / ``messages``, llama.cpp's
    ``exceed_context_size_error``."""

    is_retryable: bool = False
    #: What the user should do, for errors whose class knows better than the generic advice the
    #: agent layer adds by kind (``AgentLLMError``'s message uses it when set).
    advice: str | None = None

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        model: str | None = None,
        status_code: int | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
        vendor_type: str | None = None,
        vendor_code: str | None = None,
        vendor_param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.model = model
        self.status_code = status_code
        self.request_id = request_id
        self.retry_after = retry_after
        self.vendor_type = vendor_type
        self.vendor_code = vendor_code
        self.vendor_param = vendor_param

    def __str__(self) -> str:
        where = ":".join(p for p in (self.provider, self.model) if p)
        parts = [f"[{where}] {self.message}" if where else self.message]
        if self.status_code is not None:
            parts.append(f"(HTTP {self.status_code})")
        if self.request_id:
            parts.append(f"(request id {self.request_id})")
        return " ".join(parts)


class InvalidRequestError(LLMError):
    """Raised for HTTP 400, 413 or 422: the request itself is wrong; fix it before trying again."""


class ContextWindowExceededError(InvalidRequestError):
    """Raised when the prompt is longer than the model's context window (shorten the history, or use a
    model with a larger window)."""


class AuthenticationError(LLMError):
    """Raised for HTTP 401 or 403: the API key is wrong or not allowed to use the model."""


class MissingCredentialsError(AuthenticationError):
    """Raised when a provider is created with no API key at all; the message names the variable to set."""


class ModelNotFoundError(LLMError):
    """Raised for HTTP 404: the endpoint has no such model, or the key has no access to it."""


class RequestTimeoutError(LLMError):
    """Raised for HTTP 408 or a client-side timeout (retryable)."""

    is_retryable = True


class RateLimitError(LLMError):
    """Raised for HTTP 429; ``retry_after`` holds the wait the vendor asked for, when it sent one
    (retryable)."""

    is_retryable = True


class ServerError(LLMError):
    """Raised for HTTP 5xx: the vendor failed (retryable)."""

    is_retryable = True


class OverloadedError(ServerError):
    """Raised for HTTP 529 (and the vendors' "overloaded" errors): the vendor is too busy now
    (retryable)."""


class LLMConnectionError(LLMError):
    """Raised when the endpoint cannot be reached (DNS, refused or reset connection) (retryable)."""

    is_retryable = True
    # Its message names the URL and asks whether the server runs there: after the retries, calling
    # it "transient" would mislead (a wrong port never recovers).
    advice = ""


class ServerNotRunningError(LLMConnectionError):
    """Raised when a server on this machine (a loopback base URL: a local model server) refuses the
    connection: nothing listens on that port, so retrying is pointless; it fails at once, saying
    how to start one."""

    is_retryable = False
    advice = (
        "Start the model server first (llama-server -m MODEL.gguf -c 8192 --port 8080; ollama serve; "
        "LM Studio's local server; vllm serve MODEL), or fix the port in the base URL."
    )


class StreamInterruptedError(LLMError):
    """Raised when a stream breaks off before it finished (retryable)."""

    is_retryable = True


class ResponseFormatError(LLMError):
    """Raised when the endpoint answers something that cannot be read as a reply (not the vendor's
    format)."""


_BY_NAME: dict[str, type[LLMError]] = {
    cls.__name__: cls
    for cls in (
        LLMError,
        InvalidRequestError,
        ContextWindowExceededError,
        AuthenticationError,
        MissingCredentialsError,
        ModelNotFoundError,
        RequestTimeoutError,
        RateLimitError,
        ServerError,
        OverloadedError,
        LLMConnectionError,
        ServerNotRunningError,
        StreamInterruptedError,
        ResponseFormatError,
    )
}


def error_class_named(name: str) -> type[LLMError]:
    """The error class called ``name`` (for rebuilding a serialised error), ``LLMError`` if unknown."""
    return _BY_NAME.get(name, LLMError)


# Phrases vendors use when the prompt does not fit; matched case-insensitively in a 400's message.
# Local servers: llama.cpp "request (N tokens) exceeds the available context size (M tokens), try
# increasing it" (type exceed_context_size_error; older: "the request exceeds the available context
# size, try increasing the context size or enable context shift"); vLLM "This model's maximum context
# length is N tokens..." and "The decoder prompt (length N) is longer than the maximum model length of
# M"; LM Studio "Trying to keep the first N tokens when context the overflows...", "The number of
# tokens to keep from the initial prompt is greater than the context length", "Cannot truncate prompt
# with n_keep (N) >= n_ctx (M)"; Ollama "prompt too long; exceeded max context length by N tokens".
_CONTEXT_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|prompt is too long|prompt too long"
    r"|too many tokens|input length .* exceed|reduce the length|string too long"
    r"|exceed_context_size|maximum model length|context the overflows|n_keep .*n_ctx",
    re.IGNORECASE,
)
# The local servers' own wordings, which some versions send with a 5xx status: still an overflow.
_LOCAL_OVERFLOW = re.compile(
    r"exceeds the available context size|exceed_context_size_error|longer than the maximum model length"
    r"|context the overflows|n_keep .*n_ctx|exceeded max context length",
    re.IGNORECASE,
)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` (preferred) or ``retry-after`` (seconds or HTTP date)."""
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    if (ms := lowered.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        import email.utils  # only for an HTTP-date Retry-After, which few servers send

        parsed = email.utils.parsedate_tz(value)
        if parsed is None:
            return None
        return max(0.0, email.utils.mktime_tz(parsed) - now())


def connection_broke_off(
    where: str, cause: BaseException | None, *, provider: str | None, model: str | None
) -> LLMConnectionError:
    """The error for a connection the server had accepted that then broke (a reset, a keep-alive
    connection the server had already dropped, a body cut short): the server was reached, so the
    message must not send the user looking for one that is not running. ``where`` names the endpoint.
    The one wording for every provider."""
    shown = ""
    if cause is not None:
        shown = f" ({type(cause).__name__}: {cause})" if str(cause) else f" ({type(cause).__name__})"
    return LLMConnectionError(
        f"the connection to {where} broke off before the reply was complete{shown}; the server was "
        "reached, so try the call again (a server or proxy closing idle keep-alive connections, or a "
        "load balancer cutting them, does this)",
        provider=provider, model=model,
    )


def stream_broke_off(
    where: str, cause: BaseException | None, *, provider: str | None, model: str | None
) -> StreamInterruptedError:
    """The error for a reply whose stream broke off after it had started (the connection dropped
    mid-body). The one wording for every provider; ``where`` names the endpoint."""
    shown = ""
    if cause is not None:
        shown = f" ({type(cause).__name__}: {cause})" if str(cause) else f" ({type(cause).__name__})"
    return StreamInterruptedError(
        f"the connection to {where} broke off mid-reply{shown}; try the call again",
        provider=provider, model=model,
    )


def error_from_status(
    status_code: int,
    detail: str,
    *,
    provider: str,
    model: str | None = None,
    headers: Mapping[str, str] | None = None,
    request_id: str | None = None,
    credentials_hint: str | None = None,
    vendor_type: str | None = None,
    vendor_code: str | None = None,
    vendor_param: str | None = None,
) -> LLMError:
    """Map an HTTP failure onto the tree, with a message that says what to do about it.

    ``credentials_hint`` names where the key comes from (e.g. "the ANTHROPIC_API_KEY environment
    variable") so an authentication failure can say what to fix. ``vendor_type``, ``vendor_code`` and
    ``vendor_param`` (the error body's own words) are kept on the error as they are.
    """
    retry_after = parse_retry_after(headers)

    def make(cls: type[LLMError], message: str) -> LLMError:
        return cls(message, provider=provider, model=model, status_code=status_code,
                   request_id=request_id, retry_after=retry_after, vendor_type=vendor_type,
                   vendor_code=vendor_code, vendor_param=vendor_param)

    detail = detail.strip() or "no detail given"
    if status_code in (400, 413, 422) or (status_code >= 500 and _LOCAL_OVERFLOW.search(detail)):
        if _CONTEXT_OVERFLOW.search(detail):
            return make(
                ContextWindowExceededError,
                f"the prompt does not fit the model's context window: {detail}. "
                "Shorten the history (compaction) or use a model with a larger window.",
            )
        return make(InvalidRequestError, f"the request was rejected: {detail}")
    if status_code in (401, 403):
        hint = f" Check {credentials_hint}." if credentials_hint else " Check the API key."
        verb = "rejected" if status_code == 401 else "not allowed to use this resource"
        return make(AuthenticationError, f"the API key was {verb}: {detail}.{hint}")
    if status_code == 404:
        return make(
            ModelNotFoundError,
            f"not found: {detail}. Check the model id (and the base URL for a self-hosted server).",
        )
    if status_code == 408:
        return make(RequestTimeoutError, f"the request timed out at the server: {detail}")
    if status_code == 429:
        wait = f" The server asks to wait {retry_after:g}s." if retry_after is not None else ""
        return make(RateLimitError, f"rate limited: {detail}.{wait}")
    if status_code == 529:
        return make(OverloadedError, f"the service is overloaded: {detail}. Try again shortly.")
    if status_code >= 500:
        return make(ServerError, f"the server failed: {detail}. Try again shortly.")
    return make(LLMError, f"unexpected HTTP status {status_code}: {detail}")


def _word(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | str):
        return str(value) if str(value) else None
    return None


def vendor_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """``(type, code, param)`` of an error object (``{"message", "type", "code", "param"}``; a whole
    body ``{"error": {...}}`` is looked into). llama.cpp sends its HTTP status as ``code`` (a number):
    it is kept as text."""
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        body = body["error"]
    if not isinstance(body, Mapping):
        return None, None, None
    return _word(body.get("type")), _word(body.get("code")), _word(body.get("param"))
