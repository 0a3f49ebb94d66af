"""How a hook's results combine: a ``Fold`` per call. pluggy's list or first result, and the agcore
hooks' own rules: chained rewrites, the first deny, any False."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agcore.hooks._context import ToolCallDecision

__all__ = ["AllTrue", "Chain", "Collect", "Decide", "First", "Fold", "Ignore"]


class Fold:
    """Combines the results of a hook's implementations. Implementations returning None are skipped."""

    __slots__ = ()

    def feed(self, result: object, kwargs: dict[str, object]) -> bool:
        """Take one implementation's non-None result (may rewrite ``kwargs`` for the next one);
        True stops the call. Raises TypeError for a result of the wrong type."""
        return False

    def value(self, kwargs: Mapping[str, object]) -> object:
        """The combined result the wrappers see and the caller gets."""
        return None

    def replacement(self, value: object, kwargs: Mapping[str, object]) -> object:
        """Check a wrapper's replacement result; None keeps what the implementations produced."""
        return value


class Ignore(Fold):
    """Observers: results are not used. Stateless, so one instance serves every call."""

    __slots__ = ()


class Collect(Fold):
    """pluggy's default: the list of non-None results."""

    __slots__ = ("results",)

    def __init__(self) -> None:
        self.results: list[object] = []

    def feed(self, result: object, kwargs: dict[str, object]) -> bool:
        self.results.append(result)
        return False

    def value(self, kwargs: Mapping[str, object]) -> object:
        return self.results


class First(Fold):
    """pluggy's ``firstresult``: the first non-None result ends the call."""

    __slots__ = ("result",)

    def __init__(self) -> None:
        self.result: object = None

    def feed(self, result: object, kwargs: dict[str, object]) -> bool:
        self.result = result
        return True

    def value(self, kwargs: Mapping[str, object]) -> object:
        return self.result


class Chain(Fold):
    """A rewrite hook: each result replaces argument ``arg`` for the next implementation. Stateless
    (the state is in ``kwargs``), so one instance serves every call."""

    __slots__ = ("arg", "hook_name", "kind")

    def __init__(self, hook_name: str, arg: str, kind: type[Any]) -> None:
        self.hook_name = hook_name
        self.arg = arg
        self.kind = kind

    def _check(self, result: object) -> None:
        if not isinstance(result, self.kind):
            raise TypeError(
                f"{self.hook_name} must return a {self.kind.__name__} (the rewritten {self.arg}) or None "
                f"(keep it), got {type(result).__name__}"
            )

    def feed(self, result: object, kwargs: dict[str, object]) -> bool:
        self._check(result)
        kwargs[self.arg] = result
        return False

    def value(self, kwargs: Mapping[str, object]) -> object:
        return kwargs[self.arg]

    def replacement(self, value: object, kwargs: Mapping[str, object]) -> object:
        if value is None:
            return kwargs[self.arg]
        self._check(value)
        return value


def _check_decision(result: object) -> ToolCallDecision:
    if not isinstance(result, ToolCallDecision):
        raise TypeError(
            "before_tool_call must return a ToolCallDecision (ToolCallDecision.allow(), .deny(reason) "
            f"or .rewrite(arguments)) or None, got {type(result).__name__}"
        )
    return result


class Decide(Fold):
    """``before_tool_call``: the first deny wins and ends the call; rewrites chain through ``call``."""

    __slots__ = ("arguments", "denial", "reason")

    def __init__(self) -> None:
        self.denial: ToolCallDecision | None = None
        self.arguments: dict[str, Any] | None = None
        self.reason: str | None = None

    def feed(self, result: object, kwargs: dict[str, object]) -> bool:
        decision = _check_decision(result)
        if decision.action == "deny":
            self.denial = decision
            return True
        if decision.action == "rewrite":
            assert decision.arguments is not None  # the model's validator guarantees it
            self.arguments = dict(decision.arguments)
            self.reason = decision.reason
            call: Any = kwargs["call"]
            kwargs["call"] = call.model_copy(update={"input": self.arguments})
        return False

    def value(self, kwargs: Mapping[str, object]) -> object:
        if self.denial is not None:
            return self.denial
        if self.arguments is not None:
            return ToolCallDecision.rewrite(self.arguments, reason=self.reason)
        return ToolCallDecision.allow()

    def replacement(self, value: object, kwargs: Mapping[str, object]) -> object:
        return self.value(kwargs) if value is None else _check_decision(value)


def _check_bool(result: object) -> bool:
    if not isinstance(result, bool):
        raise TypeError(
            f"on_turn_end must return True/None (go on) or False (stop the loop), got {type(result).__name__}"
        )
    return result


class AllTrue(Fold):
    """``on_turn_end``: any False stops the loop, but every implementation still sees the turn."""

    __slots__ = ("go_on",)

    def __init__(self) -> None:
        self.go_on = True

    def feed(self, result: object, kwargs: dict[str, object]) -> bool:
        if not _check_bool(result):
            self.go_on = False
        return False

    def value(self, kwargs: Mapping[str, object]) -> object:
        return self.go_on

    def replacement(self, value: object, kwargs: Mapping[str, object]) -> object:
        return self.go_on if value is None else _check_bool(value)
