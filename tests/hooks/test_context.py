"""HookContext, ToolCallDecision and HookFailure: the values plugins see and the loop catches."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from pydantic import ValidationError

from agcore.hooks import HookContext, HookFailure, ToolCallDecision
from agcore.llm import Usage


def test_context_defaults_and_replace_keep_the_original() -> None:
    ctx = HookContext(session_id="s", agent_name="a", turn_index=2)
    assert (ctx.plan_step_index, ctx.usage, ctx.cost_usd, dict(ctx.metadata)) == (None, Usage(), None, {})

    later = ctx.replace(turn_index=3, usage=Usage(input_tokens=5), metadata={"tenant": "t1"})

    assert (later.turn_index, later.usage.input_tokens, later.metadata["tenant"]) == (3, 5, "t1")
    assert (ctx.turn_index, ctx.usage.input_tokens) == (2, 0)
    assert later.session_id == "s"


def test_context_is_immutable_and_its_default_metadata_read_only() -> None:
    ctx = HookContext(session_id="s", agent_name="a", turn_index=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.turn_index = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        ctx.metadata["x"] = 1  # type: ignore[index]
    with pytest.raises(TypeError, match="unexpected keyword"):
        ctx.replace(no_such_field=1)


def test_decision_constructors() -> None:
    assert ToolCallDecision.allow().action == "allow"
    assert not ToolCallDecision.allow().denied

    deny = ToolCallDecision.deny("not in this workspace")
    assert (deny.action, deny.reason, deny.denied) == ("deny", "not in this workspace", True)

    rewrite = ToolCallDecision.rewrite({"cmd": "ls -la"})
    assert (rewrite.action, rewrite.arguments) == ("rewrite", {"cmd": "ls -la"})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"action": "rewrite"}, "needs the new `arguments`"),
        ({"action": "allow", "arguments": {"a": 1}}, "takes no `arguments`"),
        ({"action": "deny"}, "needs a `reason`"),
        ({"action": "maybe"}, "allow"),
    ],
)
def test_inconsistent_decisions_are_rejected(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ToolCallDecision(**fields)  # type: ignore[arg-type]


def test_decision_is_frozen_and_round_trips_json() -> None:
    decision = ToolCallDecision.rewrite({"path": "a.txt"}, reason="normalised")
    with pytest.raises(ValidationError):
        decision.action = "deny"  # type: ignore[misc]
    assert ToolCallDecision.model_validate_json(decision.model_dump_json()) == decision


def test_hook_failure_names_plugin_and_hook_and_survives_pickling() -> None:
    error = ValueError("quota service down")
    failure = HookFailure("before_tool_call", "billing", error)

    text = str(failure)
    assert "'billing'" in text
    assert "'before_tool_call'" in text
    assert "ValueError: quota service down" in text
    assert "turn was stopped" in text
    assert (failure.hook_name, failure.plugin_name, failure.error) == ("before_tool_call", "billing", error)

    copy = pickle.loads(pickle.dumps(failure))
    assert (copy.hook_name, copy.plugin_name, str(copy.error)) == ("before_tool_call", "billing", str(error))
    assert str(copy) == text
