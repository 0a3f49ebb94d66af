"""The model registry: what each model can take and what it costs.

Prices are USD per million tokens as the vendors published them; they change, so applications
override or add entries with ``register_model()``. A model missing from the registry still works
everywhere; only its cost is unknown (``cost_usd`` returns None) and limits fall back to defaults.
Lookup accepts the exact id, an alias, a dated id (``claude-sonnet-4-5-20250929``,
``gpt-4o-2024-08-06``) and a ``provider:`` prefix.
"""

from __future__ import annotations

import difflib
import re
import threading
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from agcore.llm.types import Usage

__all__ = [
    "ModelInfo",
    "ModelRegistry",
    "UnknownModelWarning",
    "cost_usd",
    "default_registry",
    "get_model_info",
    "register_model",
]


class UnknownModelWarning(UserWarning):
    """A model id the registry does not know, asked of a vendor whose models it lists (Anthropic,
    OpenAI): most likely a typo (the message says which id is near), else a model too new for the
    registry: it runs, but its cost is not counted until ``register_model()`` adds it."""


class ModelInfo(BaseModel):
    """A model's entry in the registry: its id and provider, context window and output cap, prices in USD
    per million tokens (input, output, cache read, cache write), capabilities, and other names it goes
    by (``aliases``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

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
        """What ``usage`` costs on this model, in USD. Reasoning tokens are priced as the output
        tokens they are part of (``Usage.reasoning_tokens`` is a breakdown, never added again)."""
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
        """The model named ``model``: an id, an alias, a dated id, or any of these behind its own
        provider's prefix (``anthropic:claude-…``). Another prefix (``antropic:claude-…``, a typo)
        finds nothing, so a misspelt vendor is never priced as the model it names."""
        if (found := self._find(model)) is not None:
            return found
        prefix, sep, rest = model.partition(":")  # Ollama ids like "llama3:8b" hold a colon too
        if sep and (found := self._find(rest)) is not None and found.provider == prefix:
            return found
        return None

    def _find(self, name: str) -> ModelInfo | None:
        if (found := self._by_name.get(name)) is not None:
            return found
        undated = _DATE_SUFFIX.sub("", name)
        return self._by_name.get(undated) if undated != name else None

    def close_matches(self, model: str, *, provider: str | None = None, n: int = 3) -> list[str]:
        """The registered ids (and aliases) nearest to ``model``, best first, at most ``n``; only
        ``provider``'s when given. For "did you mean" hints: ``claude-haku-4-5`` finds
        ``claude-haiku-4-5``."""
        with self._lock:
            names = [name for name, info in self._by_name.items() if provider in (None, info.provider)]
        return difflib.get_close_matches(_DATE_SUFFIX.sub("", model), names, n=n, cutoff=0.75)

    def __iter__(self) -> Iterator[ModelInfo]:
        return iter(list(self._models.values()))

    def __len__(self) -> int:
        return len(self._models)


def _anthropic(
    id: str, window: int, out: int, inp: float, outp: float, *aliases: str,
    read: float | None = None, thinking: bool = True,
) -> ModelInfo:
    # Anthropic prices 5-minute cache writes at 1.25x input and, by default, cache reads at 0.1x
    # input; some newer models read cheaper, so ``read`` overrides the read price.
    # model_construct (here and in _openai): these typed helpers are the table's check, and
    # validating it at import would build ModelInfo's validator before anything needs it.
    return ModelInfo.model_construct(
        id=id, provider="anthropic", context_window=window, max_output_tokens=out,
        input_usd_per_mtok=inp, output_usd_per_mtok=outp,
        cache_read_usd_per_mtok=round(inp * 0.1, 6) if read is None else read,
        cache_write_usd_per_mtok=round(inp * 1.25, 6),
        supports_thinking=thinking, aliases=aliases,
    )


def _openai(
    id: str, window: int, out: int, inp: float, outp: float, cached: float, *,
    write: float = 0.0, thinking: bool = False,
) -> ModelInfo:
    # OpenAI discounts cached input; writes cost nothing extra except on GPT-5.6 and later, which
    # bill a 30-minute cache write at 1.25x input (``write``).
    return ModelInfo.model_construct(
        id=id, provider="openai", context_window=window, max_output_tokens=out,
        input_usd_per_mtok=inp, output_usd_per_mtok=outp, cache_read_usd_per_mtok=cached,
        cache_write_usd_per_mtok=write, supports_thinking=thinking,
    )


# List prices (USD per million tokens, standard tier) as published in November 2026, checked on
# 2026-11-22 against copies of the vendors' model and pricing pages (platform.claude.com,
# developers.openai.com) where one was found, else against at least two third-party price tables that
# agreed. Listed: the models the installed SDKs name that are not past their shutdown date. Cache
# writes are the 5-minute (Anthropic) or 30-minute (OpenAI) price. Not modelled: long-context tiers
# (OpenAI's 1,050,000-token models bill a request over 272K input tokens at 2x input and cache and
# 1.5x output; Claude Haiku 5.5 bills a prompt over 100K tokens at 5x), longer cache retention,
# batch, flex, fast and regional pricing. OpenAI's 1,050,000-token windows take 922K input at most.
_BUILTIN = [
    _anthropic("claude-fable-5-2", 1_000_000, 128_000, 8.0, 40.0, read=0.2),
    _anthropic("claude-fable-5-1", 1_000_000, 128_000, 10.0, 50.0, read=0.25),
    _anthropic("claude-mythos-5-1", 1_000_000, 128_000, 10.0, 50.0, read=0.25),  # verified orgs only
    _anthropic("claude-fable-5", 1_000_000, 128_000, 10.0, 50.0),
    _anthropic("claude-mythos-5", 1_000_000, 128_000, 10.0, 50.0),  # verified orgs only
    _anthropic("claude-opus-5-5", 1_000_000, 128_000, 4.0, 20.0, read=0.2),
    _anthropic("claude-opus-5", 1_000_000, 128_000, 5.0, 25.0),
    _anthropic("claude-opus-4-8", 1_000_000, 128_000, 5.0, 25.0),
    _anthropic("claude-opus-4-7", 1_000_000, 128_000, 5.0, 25.0),
    _anthropic("claude-opus-4-6", 1_000_000, 128_000, 5.0, 25.0),
    _anthropic("claude-opus-4-5", 200_000, 64_000, 5.0, 25.0, "claude-opus-4-5-20251101"),
    _anthropic("claude-sonnet-5-5", 1_000_000, 128_000, 2.0, 10.0, read=0.1),  # read cut 2026-10-07
    _anthropic("claude-sonnet-5", 1_000_000, 128_000, 2.0, 10.0),
    _anthropic("claude-sonnet-4-6", 1_000_000, 128_000, 3.0, 15.0),
    # Deprecated, retires 2026-11-30.
    _anthropic("claude-sonnet-4-5", 200_000, 64_000, 3.0, 15.0, "claude-sonnet-4-5-20250929"),
    # Prompts up to 100K tokens; longer ones bill $0.50 / $2.50 (cache read $0.05).
    _anthropic("claude-haiku-5-5", 1_000_000, 128_000, 0.1, 0.5),
    _anthropic("claude-haiku-4-5", 200_000, 64_000, 1.0, 5.0, "claude-haiku-4-5-20251001"),
    # Cached input as "60% below GPT-6 Astra"; the write price follows OpenAI's 1.25x rule.
    _openai("gpt-6.2-astra", 1_050_000, 128_000, 8.0, 40.0, 0.4, write=10.0, thinking=True),
    _openai("gpt-6.2-sol", 1_050_000, 128_000, 2.0, 10.0, 0.1, write=2.5, thinking=True),
    _openai("gpt-6.1-sol", 1_050_000, 128_000, 2.0, 10.0, 0.1, write=2.5, thinking=True),
    _openai("gpt-6.1-terra", 1_050_000, 128_000, 1.0, 5.0, 0.05, write=1.25, thinking=True),
    _openai("gpt-6-astra", 1_050_000, 128_000, 10.0, 50.0, 1.0, write=12.5, thinking=True),
    _openai("gpt-6-sol", 1_050_000, 128_000, 2.0, 10.0, 0.2, write=2.5, thinking=True),
    _openai("gpt-6-luna", 1_050_000, 128_000, 0.1, 0.5, 0.01, write=0.125, thinking=True),
    _openai("gpt-5.6-terra", 1_050_000, 128_000, 2.0, 12.0, 0.2, write=2.5, thinking=True),
    _openai("gpt-5.6-luna", 1_050_000, 128_000, 0.2, 1.2, 0.02, write=0.25, thinking=True),
    _openai("gpt-5.5", 1_050_000, 128_000, 5.0, 30.0, 0.5, thinking=True),
    _openai("gpt-5.4", 1_050_000, 128_000, 2.5, 15.0, 0.25, thinking=True),
    _openai("gpt-5.4-mini", 400_000, 128_000, 0.75, 4.5, 0.075, thinking=True),
    _openai("gpt-5.4-nano", 400_000, 128_000, 0.2, 1.25, 0.02, thinking=True),  # shuts 2027-04-01
    _openai("gpt-5.2", 400_000, 128_000, 1.75, 14.0, 0.175, thinking=True),
    _openai("gpt-5.1", 400_000, 128_000, 1.25, 10.0, 0.125, thinking=True),  # shuts 2027-04-01
    # gpt-5, gpt-5-mini, gpt-5-nano and o3 shut down 2026-12-11.
    _openai("gpt-5", 400_000, 128_000, 1.25, 10.0, 0.125, thinking=True),
    _openai("gpt-5-mini", 400_000, 128_000, 0.25, 2.0, 0.025, thinking=True),
    _openai("gpt-5-nano", 400_000, 128_000, 0.05, 0.4, 0.005, thinking=True),
    _openai("o3", 200_000, 100_000, 2.0, 8.0, 0.5, thinking=True),
    # gpt-4.1, gpt-4.1-mini, gpt-4o and gpt-4o-mini shut down 2027-01-14.
    _openai("gpt-4.1", 1_047_576, 32_768, 2.0, 8.0, 0.5),
    _openai("gpt-4.1-mini", 1_047_576, 32_768, 0.4, 1.6, 0.1),
    _openai("gpt-4o", 128_000, 16_384, 2.5, 10.0, 1.25),
    _openai("gpt-4o-mini", 128_000, 16_384, 0.15, 0.6, 0.075),
]

default_registry = ModelRegistry(_BUILTIN)


def get_model_info(model: str) -> ModelInfo | None:
    """The registry entry for ``model`` (id, alias, dated id or ``provider:id``), or None."""
    return default_registry.get(model)


def register_model(info: ModelInfo) -> None:
    """Add ``info`` to the default registry (prices, context window), replacing a model with the same id
    or a clashing alias."""
    default_registry.register(info)


def cost_usd(model: str, usage: Usage) -> float | None:
    """What ``usage`` cost on ``model`` in USD, or None when the model's prices are unknown."""
    info = default_registry.get(model)
    return None if info is None else info.cost_usd(usage)
