"""The model registry: what each model can take and what it costs.

Prices are USD per million tokens as the vendors published them; they change, so applications
override or add entries with ``register_model()``. A model missing from the registry still works
everywhere; only its cost is unknown (``cost_usd`` returns None) and limits fall back to defaults.
Lookup accepts the exact id, an alias, a dated id (``claude-sonnet-4-5-20250929``,
``gpt-4o-2024-08-06``) and a ``provider:`` prefix.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from agcore.llm.types import Usage

__all__ = [
    "ModelInfo",
    "ModelRegistry",
    "cost_usd",
    "default_registry",
    "get_model_info",
    "register_model",
]


class ModelInfo(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    provider: str
    context_window: int
    max_output_tokens: int
    input_usd_per_mtok: float
    output_usd_per_mtok: float
    cache_read_usd_per_mtok: float = 0.0
    cache_write_usd_per_mtok: float = 0.0
    supports_tools: bool = True
    supports_vision: bool = True
    supports_thinking: bool = False
    aliases: tuple[str, ...] = Field(default_factory=tuple)

    def cost_usd(self, usage: Usage) -> float:
        return (
            usage.input_tokens * self.input_usd_per_mtok
            + usage.output_tokens * self.output_usd_per_mtok
            + usage.cache_read_tokens * self.cache_read_usd_per_mtok
            + usage.cache_write_tokens * self.cache_write_usd_per_mtok
        ) / 1_000_000


# A trailing release date: Anthropic writes -20250929, OpenAI -2024-08-06.
_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


class ModelRegistry:
    """Thread-safe id/alias index of ``ModelInfo``."""

    def __init__(self, models: Iterable[ModelInfo] = ()) -> None:
        self._lock = threading.Lock()
        self._by_name: dict[str, ModelInfo] = {}
        self._models: dict[str, ModelInfo] = {}
        for info in models:
            self.register(info)

    def register(self, info: ModelInfo) -> None:
        """Add ``info``, replacing any model with the same id or a clashing alias."""
        with self._lock:
            old = self._models.pop(info.id, None)
            if old is not None:
                for name in (old.id, *old.aliases):
                    self._by_name.pop(name, None)
            self._models[info.id] = info
            for name in (info.id, *info.aliases):
                self._by_name[name] = info

    def get(self, model: str) -> ModelInfo | None:
        candidates = [model]
        if ":" in model:  # "anthropic:claude-…"; but Ollama ids like "llama3:8b" hold a colon too
            candidates.append(model.split(":", 1)[1])
        for name in candidates:
            if (found := self._by_name.get(name)) is not None:
                return found
            undated = _DATE_SUFFIX.sub("", name)
            if undated != name and (found := self._by_name.get(undated)) is not None:
                return found
        return None

    def __iter__(self) -> Iterator[ModelInfo]:
        return iter(list(self._models.values()))

    def __len__(self) -> int:
        return len(self._models)


def _anthropic(
    id: str, window: int, out: int, inp: float, outp: float, *aliases: str, thinking: bool = True
) -> ModelInfo:
    # Anthropic prices cache reads at 0.1x input and 5-minute cache writes at 1.25x input.
    return ModelInfo(
        id=id, provider="anthropic", context_window=window, max_output_tokens=out,
        input_usd_per_mtok=inp, output_usd_per_mtok=outp,
        cache_read_usd_per_mtok=round(inp * 0.1, 6), cache_write_usd_per_mtok=round(inp * 1.25, 6),
        supports_thinking=thinking, aliases=aliases,
    )


def _openai(
    id: str, window: int, out: int, inp: float, outp: float, cached: float, *, thinking: bool = False
) -> ModelInfo:
    # OpenAI caches automatically: reads are discounted, writes cost nothing extra.
    return ModelInfo(
        id=id, provider="openai", context_window=window, max_output_tokens=out,
        input_usd_per_mtok=inp, output_usd_per_mtok=outp, cache_read_usd_per_mtok=cached,
        supports_thinking=thinking,
    )


_BUILTIN = [
    _anthropic("claude-opus-4-5", 200_000, 64_000, 5.0, 25.0, "claude-opus-4-5-20251101"),
    _anthropic("claude-opus-4-1", 200_000, 32_000, 15.0, 75.0, "claude-opus-4-1-20250805"),
    _anthropic("claude-opus-4-0", 200_000, 32_000, 15.0, 75.0, "claude-opus-4-20250514", "claude-opus-4"),
    _anthropic("claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0, "claude-sonnet-4-5-20250929"),
    _anthropic("claude-sonnet-4-0", 200_000, 64_000, 3.0, 15.0, "claude-sonnet-4-20250514",
               "claude-sonnet-4"),
    _anthropic("claude-3-7-sonnet-latest", 200_000, 64_000, 3.0, 15.0, "claude-3-7-sonnet-20250219",
               "claude-3-7-sonnet"),
    _anthropic("claude-haiku-4-5", 200_000, 64_000, 1.0, 5.0, "claude-haiku-4-5-20251001"),
    _anthropic("claude-3-5-haiku-latest", 200_000, 8_192, 0.8, 4.0, "claude-3-5-haiku-20241022",
               "claude-3-5-haiku", thinking=False),
    _openai("gpt-5", 400_000, 128_000, 1.25, 10.0, 0.125, thinking=True),
    _openai("gpt-5-mini", 400_000, 128_000, 0.25, 2.0, 0.025, thinking=True),
    _openai("gpt-5-nano", 400_000, 128_000, 0.05, 0.4, 0.005, thinking=True),
    _openai("gpt-4.1", 1_047_576, 32_768, 2.0, 8.0, 0.5),
    _openai("gpt-4.1-mini", 1_047_576, 32_768, 0.4, 1.6, 0.1),
    _openai("gpt-4.1-nano", 1_047_576, 32_768, 0.1, 0.4, 0.025),
    _openai("gpt-4o", 128_000, 16_384, 2.5, 10.0, 1.25),
    _openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.6, 0.075),
    _openai("o3", 200_000, 100_000, 2.0, 8.0, 0.5, thinking=True),
    _openai("o4-mini", 200_000, 100_000, 1.1, 4.4, 0.275, thinking=True),
]

default_registry = ModelRegistry(_BUILTIN)


def get_model_info(model: str) -> ModelInfo | None:
    """The registry entry for ``model`` (id, alias, dated id or ``provider:id``), or None."""
    return default_registry.get(model)


def register_model(info: ModelInfo) -> None:
    default_registry.register(info)


def cost_usd(model: str, usage: Usage) -> float | None:
    """What ``usage`` cost on ``model`` in USD, or None when the model's prices are unknown."""
    info = default_registry.get(model)
    return None if info is None else info.cost_usd(usage)
