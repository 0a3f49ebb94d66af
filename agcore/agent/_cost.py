"""``CostTracker``: tokens and USD spent by a session, per model, cache tokens included."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agcore.llm.models import ModelRegistry, default_registry
from agcore.llm.types import AssistantMessage, Usage

__all__ = ["CostTracker"]

#: The ``by_model`` key for replies that do not say which model wrote them.
UNKNOWN_MODEL = "<unknown>"


class CostTracker(BaseModel):
    """Running totals of model usage. ``add()`` each ``AssistantMessage``; read ``input_tokens``,
    ``output_tokens``, ``total_tokens``, ``cost_usd``, and ``usage`` (every count) and ``by_model``.

    Prices come from the model registry (``agcore.llm.models``; pass ``registry=`` for another) when
    ``cost_usd`` is read, so a price registered later applies to the whole session. Round-trips through
    JSON (``model_dump_json()`` / ``CostTracker.model_validate_json()``); the registry is not part of
    the data.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False, defer_build=True)

    usage: Usage = Field(default_factory=Usage)
    by_model: dict[str, Usage] = Field(default_factory=dict)
    calls: int = 0

    _registry: ModelRegistry | None = PrivateAttr(default=None)
    _parent: CostTracker | None = PrivateAttr(default=None)

    def __init__(self, *, registry: ModelRegistry | None = None, **data: object) -> None:
        super().__init__(**data)
        self._registry = registry

    @property
    def registry(self) -> ModelRegistry:
        """The model registry prices come from (the default registry unless one was given)."""
        return self._registry if self._registry is not None else default_registry

    def roll_up_into(self, parent: CostTracker | None) -> None:
        """Count everything added from now on in ``parent`` too (and in whatever ``parent`` rolls up
        into): a sub-agent's spend lands in its parent session's totals and budget as it happens.
        None stops rolling up. Not saved with the data: a loaded tracker rolls up nowhere."""
        ancestor = parent
        while ancestor is not None:
            if ancestor is self:
                raise ValueError("a CostTracker cannot roll up into itself (directly or through others)")
            ancestor = ancestor._parent
        self._parent = parent

    def add(self, message: AssistantMessage) -> None:
        """Count one model reply (its ``usage``, under its ``model``)."""
        self.add_usage(message.model, message.usage)

    def add_usage(self, model: str, usage: Usage) -> None:
        """Count ``usage`` spent on ``model`` (for callers that have usage without a message)."""
        key = model or UNKNOWN_MODEL
        previous = self.by_model.get(key)
        self.by_model[key] = usage if previous is None else previous + usage
        self.usage = self.usage + usage
        self.calls += 1
        if self._parent is not None:
            self._parent.add_usage(model, usage)

    @property
    def input_tokens(self) -> int:
        """Input tokens counted so far (cache reads and writes apart: see ``usage``)."""
        return self.usage.input_tokens

    @property
    def output_tokens(self) -> int:
        """Output tokens counted so far (reasoning included)."""
        return self.usage.output_tokens

    @property
    def total_tokens(self) -> int:
        """Every token counted so far: input, output, cache reads and cache writes."""
        return self.usage.total_tokens

    @property
    def unknown_models(self) -> set[str]:
        """Models with usage whose prices the registry does not know: ``cost_usd`` leaves them out."""
        return {m for m in self.by_model if self.registry.get(m) is None}

    @property
    def cost_usd(self) -> float | None:
        """USD spent on the models with known prices; None when usage exists but none of it has a
        known price. Check ``unknown_models`` to see whether the figure is complete."""
        total = 0.0
        priced = False
        for model, usage in self.by_model.items():
            info = self.registry.get(model)
            if info is not None:
                total += info.cost_usd(usage)
                priced = True
        if not priced and self.by_model:
            return None
        return total

    def cost_by_model(self) -> dict[str, float | None]:
        """USD per model (None where the price is unknown)."""
        out: dict[str, float | None] = {}
        for model, usage in self.by_model.items():
            info = self.registry.get(model)
            out[model] = None if info is None else info.cost_usd(usage)
        return out
