"""``AgentError`` and its family: recoverability, wrapping, messages that say what to do, pickling."""

from __future__ import annotations

import pickle

import anyio
import pytest

from agcore.agent import (
    AgentError,
    AgentLLMError,
    AgentMemoryError,
    AgentToolError,
    Cancelled,
    ConfigError,
    HookBlocked,
    LimitExceeded,
    PlanParseError,
    TurnResult,
)
from agcore.hooks import HookFailure
from agcore.llm.errors import (
    AuthenticationError,
    ContextWindowExceededError,
    InvalidRequestError,
    LLMConnectionError,
    ModelNotFoundError,
    OverloadedError,
    RateLimitError,
)
from agcore.memory import MemoryStoreError
from agcore.tools import ToolError, UnknownToolError


@pytest.mark.parametrize(
    ("error", "recoverable"),
    [
        (AgentLLMError(RateLimitError("slow down", retry_after=2.0)), True),
        (AgentLLMError(OverloadedError("busy")), True),
        (AgentLLMError(LLMConnectionError("unreachable")), True),
        (AgentLLMError(AuthenticationError("bad key")), False),
        (AgentLLMError(InvalidRequestError("bad request")), False),
        (AgentToolError(ToolError("disk full", tool_name="write_file")), True),
        (AgentMemoryError(MemoryStoreError("database is locked")), True),
        (PlanParseError("no steps in the plan"), True),
        (HookBlocked("before_tool_call", "audit", "policy says no"), False),
        (LimitExceeded("max_turns", value=5), False),
        (ConfigError("no provider", piece="provider"), False),
        (Cancelled(), False),
        (AgentError("something else"), False),
    ],
)
def test_is_recoverable(error: AgentError, recoverable: bool) -> None:
    assert error.is_recoverable() is recoverable


def test_wrap_picks_the_wrapper_and_keeps_the_cause() -> None:
    llm = RateLimitError("slow down", provider="anthropic", model="m", status_code=429)
    wrapped = AgentError.wrap(llm)
    assert isinstance(wrapped, AgentLLMError)
    assert wrapped.cause is llm
    assert wrapped.__cause__ is llm

    tool = UnknownToolError("Unknown tool 'x'.", tool_name="x")
    assert isinstance(AgentError.wrap(tool), AgentToolError)
    assert AgentError.wrap(tool).cause is tool

    memory = MemoryStoreError("database is locked: close other writers")
    assert isinstance(AgentError.wrap(memory), AgentMemoryError)

    already = LimitExceeded("max_turns", value=3)
    assert AgentError.wrap(already) is already


def test_wrap_turns_a_hook_failure_into_hook_blocked_naming_hook_and_plugin() -> None:
    failure = HookFailure("on_llm_request", "budget", ValueError("over budget"))
    blocked = AgentError.wrap(failure)
    assert isinstance(blocked, HookBlocked)
    assert (blocked.hook_name, blocked.plugin_name) == ("on_llm_request", "budget")
    assert isinstance(blocked.cause, ValueError)
    assert "on_llm_request" in str(blocked)
    assert "'budget'" in str(blocked)
    assert "ValueError: over budget" in str(blocked)
    assert "unregister('budget')" in str(blocked)
    assert not blocked.is_recoverable()


def test_wrap_unwraps_a_single_exception_group_and_reports_unknown_errors() -> None:
    group = ExceptionGroup("task group", [ToolError("boom", tool_name="t")])
    assert isinstance(AgentError.wrap(group), AgentToolError)

    odd = AgentError.wrap(ZeroDivisionError("division by zero"))
    assert type(odd) is AgentError
    assert not odd.is_recoverable()
    assert "ZeroDivisionError: division by zero" in str(odd)
    assert "bug" in str(odd)
    assert isinstance(odd.cause, ZeroDivisionError)


@pytest.mark.anyio
async def test_wrap_recognises_the_backends_cancellation() -> None:
    caught: list[BaseException] = []
    with anyio.CancelScope() as scope:
        scope.cancel()
        try:
            await anyio.sleep(1)
        except anyio.get_cancelled_exc_class() as exc:
            caught.append(exc)
            raise
    assert len(caught) == 1
    wrapped = AgentError.wrap(caught[0])
    assert isinstance(wrapped, Cancelled)
    assert not wrapped.is_recoverable()
    assert "another turn" in str(wrapped)


def test_llm_messages_say_what_to_do() -> None:
    overflow = AgentLLMError(ContextWindowExceededError("prompt is too long", provider="anthropic"))
    assert "prompt is too long" in str(overflow)
    assert "create_context_transform" in str(overflow)  # compact_config is not read by the loop
    auth = AgentLLMError(AuthenticationError("the API key was rejected"))
    assert "credentials" in str(auth)
    transient = AgentLLMError(RateLimitError("rate limited"))
    assert "run the turn again" in str(transient)
    custom = AgentLLMError(RateLimitError("x"), "my own words")
    assert str(custom) == "my own words"


def test_limit_exceeded_names_the_limit_and_the_fix() -> None:
    partial = TurnResult(text="so far", stop="limit", turns=5)
    error = LimitExceeded("max_turns", value=5, partial=partial)
    assert error.limit == "max_turns"
    assert error.value == 5
    assert error.partial is partial
    assert "max_turns=5" in str(error)
    assert "raise AgentConfig.max_turns" in str(error)
    unknown = LimitExceeded("max_widgets")
    assert "max_widgets" in str(unknown)
    assert unknown.partial is None


def test_tool_and_memory_messages_name_the_failure() -> None:
    tool = AgentToolError(ToolError("disk full", tool_name="write_file"))
    assert str(tool) == "Tool 'write_file' failed: disk full"
    memory = AgentMemoryError(MemoryStoreError("database is locked"))
    assert "database is locked" in str(memory)
    assert "go on without memory" in str(memory)


def test_plan_parse_error_and_config_error_carry_their_details() -> None:
    plan = PlanParseError("the plan has no steps: ask the model for at least one step", raw="{}")
    assert plan.raw == "{}"
    config = ConfigError("no provider: call .provider()", piece="provider")
    assert config.piece == "provider"


@pytest.mark.parametrize(
    "error",
    [
        LimitExceeded("max_cost_usd", value=1.5),
        HookBlocked("on_turn_end", "credits", "out of credits"),
        AgentLLMError(RateLimitError("slow down", provider="openai", retry_after=3.0)),
        ConfigError("bad", piece="tools"),
        PlanParseError("bad plan", raw="[1, 2"),
        Cancelled(),
    ],
)
def test_errors_pickle_with_their_attributes(error: AgentError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.is_recoverable() == error.is_recoverable()
    for name in ("limit", "value", "hook_name", "plugin_name", "piece", "raw"):
        assert getattr(copy, name, None) == getattr(error, name, None)
    if isinstance(error, AgentLLMError):
        assert isinstance(copy.cause, RateLimitError)
        assert copy.cause.retry_after == 3.0


def test_advice_the_cause_already_gives_is_not_repeated() -> None:
    from agcore.llm.errors import error_from_status

    cause = error_from_status(404, "model 'gtp-4.1' does not exist", provider="openai", model="gtp-4.1")
    assert isinstance(cause, ModelNotFoundError)
    message = str(AgentLLMError(cause))
    assert message.count("Check the model id") == 1  # the hint used to appear twice
    overflow = str(AgentLLMError(ContextWindowExceededError("too long. Shorten the history.")))
    assert overflow.count("Shorten the history") == 1
    assert "context transform" in overflow


def test_a_deliberate_refusal_is_not_called_a_broken_plugin() -> None:
    refused = str(HookBlocked("on_llm_request", "budget", "the session spent its $1.00 budget."))
    assert refused == (
        "Hook 'on_llm_request' of plugin 'budget' stopped the turn: the session spent its $1.00 budget."
    )
    broken = str(HookBlocked("before_tool_call", "guard", cause=RuntimeError("boom")))
    assert "it raised RuntimeError: boom" in broken
    assert "HookExecutor.unregister('guard')" in broken


def test_a_store_error_keeps_its_own_advice_once() -> None:
    cause = MemoryStoreError(
        "A session 's' already exists in the session store: load it (AgentSession.load), delete it, "
        "or use another id."
    )
    message = str(AgentMemoryError(cause))
    assert ".." not in message
    assert "Check the store" not in message  # the generic advice contradicted the store's own
    assert "or use another id. The turn itself" in message


def test_a_refused_connection_is_not_called_transient_once_retries_are_spent() -> None:
    cause = LLMConnectionError("could not connect to http://127.0.0.1:1/v1. Is the server running there?")
    message = str(AgentLLMError(cause))
    assert "transient" not in message
    assert message.endswith("Is the server running there?")
