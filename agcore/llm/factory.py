"""``create_provider("vendor:model")``: one string picks the provider.

Specs:

* ``anthropic:<model>``           Anthropic Messages (``ANTHROPIC_API_KEY``, ``ANTHROPIC_BASE_URL``)
* ``openai:<model>``              OpenAI Chat Completions (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``)
* ``openai-responses:<model>``    OpenAI Responses API, reasoning items replayed (same variables)
* ``openai-compatible:<model>``   any server speaking Chat Completions; needs ``base_url=``
  (or ``OPENAI_BASE_URL``); ``openai:<model>`` with a ``base_url`` means the same
* ``ollama:<model>``              Ollama's native API (``OLLAMA_HOST``)
* ``<model>`` alone               the vendor is inferred from the model registry

A misspelt vendor or registry model gets a "did you mean" in the ``ValueError``; an Anthropic or
OpenAI model id the registry does not know (a typo, or a model newer than the registry) builds, with
an ``UnknownModelWarning`` naming the nearest known id.

Other vendors plug in with ``register_provider_factory("name", factory)``. Providers are cached by
their arguments, so asking twice for the same spec returns the same instance (and HTTP connection
pool); pass ``cache=False`` for a fresh one. A shared instance is safe to close: each holder's
``aclose()`` gives back its share and the client closes with the last one (a closed provider is never
handed out again). The cache keeps the ``MAX_CACHED_PROVIDERS`` most recently asked-for providers.
"""

from __future__ import annotations

import difflib
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from agcore.llm.models import UnknownModelWarning, default_registry
from agcore.llm.provider import LLMProvider

__all__ = [
    "clear_provider_cache", "create_provider", "parse_model_spec", "register_provider_factory",
    "unlisted_model",
]

ProviderFactory = Callable[..., LLMProvider]

#: Vendors whose model ids the registry lists: an id it lacks is worth a warning. (Not the
#: OpenAI-compatible servers or Ollama: their models are whatever the server loaded.)
_LISTED_VENDORS = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL",
                   "openai-responses": "OPENAI_BASE_URL"}

#: The most providers the cache keeps (least recently asked for go first).
MAX_CACHED_PROVIDERS = 64
_cache: OrderedDict[tuple[Any, ...], LLMProvider] = OrderedDict()
# Part of the cache key, so a changed key or host in the environment gives a new provider.
_ENV_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OLLAMA_HOST")
_cache_lock = threading.Lock()


def _anthropic(model: str, **options: Any) -> LLMProvider:
    from agcore.llm.providers.anthropic import AnthropicProvider

    return AnthropicProvider(model, **options)


def _openai(model: str, **options: Any) -> LLMProvider:
    from agcore.llm.providers.openai import OpenAIProvider

    return OpenAIProvider(model, **options)


def _openai_compatible(model: str, **options: Any) -> LLMProvider:
    if not (options.get("base_url") or os.environ.get("OPENAI_BASE_URL")):
        raise ValueError(
            f"'openai-compatible:{model}' needs the server's URL: pass base_url='http://host:port/v1' "
            "or set OPENAI_BASE_URL"
        )
    return _openai(model, **options)


def _openai_responses(model: str, **options: Any) -> LLMProvider:
    from agcore.llm.providers.openai_responses import OpenAIResponsesProvider

    return OpenAIResponsesProvider(model, **options)


def _ollama(model: str, **options: Any) -> LLMProvider:
    from agcore.llm.providers.ollama import OllamaProvider

    if "base_url" in options:  # accept the common spelling for Ollama's host too
        options["host"] = options.pop("base_url")
    return OllamaProvider(model, **options)


_factories: dict[str, ProviderFactory] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "openai-compatible": _openai_compatible,
    "openai-responses": _openai_responses,
    "ollama": _ollama,
}


def register_provider_factory(name: str, factory: ProviderFactory) -> None:
    """Make ``create_provider("name:<model>")`` call ``factory(model, **options)``."""
    _factories[name] = factory


def parse_model_spec(spec: str) -> tuple[str, str]:
    """Split ``"vendor:model"`` into ``(vendor, model)``; infer the vendor for a bare model id."""
    vendor, sep, model = spec.partition(":")
    if sep and vendor in _factories:
        return vendor, model
    info = default_registry.get(spec)
    if info is not None:
        return info.provider, spec
    known = ", ".join(sorted(_factories))
    # A vendor name is letters and hyphens; "llama3:8b" is an Ollama model id, not a misspelt vendor.
    looks_like_vendor = sep and vendor.replace("-", "").isalpha()
    if looks_like_vendor and (close := difflib.get_close_matches(vendor, _factories, n=1, cutoff=0.6)):
        raise ValueError(
            f"unknown provider {vendor!r} in {spec!r}: did you mean {close[0]!r} ('{close[0]}:{model}')? "
            f"Providers: {known}"
        )
    if near := default_registry.close_matches(spec, n=1):
        info = default_registry.get(near[0])
        vendor_hint = f" ('{info.provider}:{near[0]}')" if info is not None else ""
        raise ValueError(
            f"unknown model {spec!r}: did you mean {near[0]!r}{vendor_hint}? A model the registry does "
            f"not list needs its provider: '<provider>:<model>' with provider one of {known}"
        )
    raise ValueError(
        f"cannot tell which provider serves {spec!r}: write it as '<provider>:<model>' with provider "
        f"one of {known} (e.g. 'anthropic:claude-sonnet-4-6', 'ollama:llama3.1')"
    )


def unlisted_model(vendor: str, model: str, **options: Any) -> list[str] | None:
    """Whether ``vendor:model`` deserves an "unknown model" warning: None when it does not (the
    registry knows the model, or the vendor's models are whatever a server loaded: OpenAI-compatible
    servers, Ollama, a ``base_url`` of your own); else the registry's nearest ids for that vendor,
    best first (maybe none: a model newer than the registry)."""
    base_url_variable = _LISTED_VENDORS.get(vendor)
    if base_url_variable is None or options.get("base_url") or os.environ.get(base_url_variable):
        return None
    if default_registry.get(model) is not None:
        return None
    return default_registry.close_matches(model, provider="openai" if vendor.startswith("openai") else vendor)


def create_provider(spec: str, *, cache: bool = True, **options: Any) -> LLMProvider:
    """A provider for ``spec``: ``anthropic:<model>``, ``openai:<model>``, ``openai-compatible:<model>``
    (needs ``base_url=`` or ``OPENAI_BASE_URL``), ``ollama:<model>``, a vendor added with
    ``register_provider_factory``, or a bare model id from the registry. ``options`` go to the
    provider's constructor: ``api_key``, ``base_url``, ``timeout``, ``retry_policy``, ``prompt_caching``, …

    Providers are cached by their arguments (``cache=False`` for a fresh one); each holder's ``aclose()``
    gives back its share, and the client closes with the last one. Raises ``ValueError`` for a spec
    naming no known vendor or model."""
    vendor, model = parse_model_spec(spec)
    if not model:
        raise ValueError(f"{spec!r} names no model: write '{vendor}:<model id>'")
    if (near := unlisted_model(vendor, model, **options)) is not None:
        guess = f" (did you mean '{vendor}:{near[0]}'?)" if near else ""
        warnings.warn(
            f"the model registry does not know '{vendor}:{model}'{guess}. If it is a new model, it runs, "
            "but its cost is not counted until register_model(ModelInfo(...)) adds it.",
            UnknownModelWarning, stacklevel=2,
        )
    factory = _factories[vendor]
    if not cache:
        return factory(model, **options)
    try:
        env = tuple(os.environ.get(name) for name in _ENV_VARS)
        key: tuple[Any, ...] = (vendor, model, env, *sorted(options.items()))
        hash(key)
    except TypeError:  # an unhashable option (a dict of headers, say): build a fresh provider
        return factory(model, **options)
    with _cache_lock:
        provider = _cache.get(key)
        if provider is None or getattr(provider, "closed", False):  # a closed one is never handed out
            provider = _cache[key] = factory(model, **options)
        _cache.move_to_end(key)
        while len(_cache) > MAX_CACHED_PROVIDERS:
            # Forgotten, not closed: its holders keep using it, and close it when they are done.
            _cache.popitem(last=False)
        share = getattr(provider, "_share", None)
        if share is not None:  # BaseProvider counts its holders, so one holder's aclose() spares the rest
            share()
        return provider


def clear_provider_cache() -> None:
    """Forget every provider ``create_provider`` cached (they are not closed: their holders close them)."""
    with _cache_lock:
        _cache.clear()
