"""``RuntimeBundle``: the dependency-injection container a session draws its parts from.

```python
bundle = RuntimeBundle()                                   # or AgentBuilder()...build()
bundle.provider.override(providers.Object(my_provider))    # swap a part (tests, hot reload)
bundle.provider.reset_override()                           # and back
registry = bundle.tool_registry()                          # parts are read by calling them
```

Parts: ``config`` (``AgentConfig``), ``provider`` (an ``LLMProvider``) and/or ``provider_resolver``
(a callable ``(session, request) -> LLMProvider``, sync or async, asked before every model call, so a
run can switch model mid-loop), ``tool_registry``, ``hook_executor``, and the optional
``memory_store`` and ``retriever``.

A present retriever is offered to the model as the ``retrieve`` tool: the default tool registry is
created with it, and ``register_memory_tools(bundle)`` adds it to any other registry (the builder
calls it). The registry is created once, on first use: a retriever set after that, or a registry
swapped in by ``override()``, needs ``register_memory_tools(bundle)`` to get the tool.
``register_memory_tools(bundle, remember=True)`` also offers a ``remember`` tool writing to the
memory store.

Note: instantiating a ``DeclarativeContainer`` returns a ``DynamicContainer`` holding copies of the
declared providers, so ``isinstance(bundle, RuntimeBundle)`` is False; every bundle has its own parts.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, cast

from dependency_injector import containers, providers

from agcore.agent._config import AgentConfig
from agcore.agent._errors import ConfigError
from agcore.hooks import HookExecutor
from agcore.llm.provider import LLMProvider
from agcore.llm.types import LLMRequest
from agcore.memory import DEFAULT_NAMESPACE, MemoryStore, MemoryStoreError, Retriever
from agcore.tools import Tool, ToolError, ToolRegistry

__all__ = [
    "ProviderResolver",
    "RuntimeBundle",
    "bundle_resolve_provider",
    "register_memory_tools",
    "remember_tool",
    "retrieve_tool",
]

#: ``(session, request) -> LLMProvider``, sync or async; ``session`` is the ``AgentSession`` asking.
ProviderResolver = Callable[[Any, LLMRequest], LLMProvider | Awaitable[LLMProvider]]

RETRIEVE_TOOL = "retrieve"
REMEMBER_TOOL = "remember"

# The memory tools this module made, and the retriever/store each wraps: lets register_memory_tools
# tell its own tool (skip, or replace when the source changed) from an application's tool of that name.
_made_for: weakref.WeakKeyDictionary[Tool, object] = weakref.WeakKeyDictionary()


def _default_tool_registry(retriever: Retriever | None = None) -> ToolRegistry:
    registry = ToolRegistry()
    if retriever is not None:
        registry.register(retrieve_tool(retriever))
    return registry


class RuntimeBundle(containers.DeclarativeContainer):
    """The dependency-injection container a session draws its parts from (``AgentBuilder().build()``
    makes one).

    Parts, each read by calling it (``bundle.tool_registry()``) and swapped with ``override()``:
    ``config`` (``AgentConfig``), ``provider`` (an ``LLMProvider``) and/or ``provider_resolver`` (a
    callable ``(session, request) -> LLMProvider``, sync or async, asked before every model call),
    ``tool_registry``, ``hook_executor``, the optional ``memory_store`` and ``retriever``, and
    ``capabilities`` (features on the turn's steps, run after agcore's own). A present
    retriever is offered to the model as the ``retrieve`` tool; ``register_memory_tools(bundle)`` adds it
    to a registry set or swapped in later. Instantiating it returns a ``DynamicContainer`` with its own
    parts, so ``isinstance(bundle, RuntimeBundle)`` is False.
    """

    config: providers.Object[AgentConfig] = providers.Object(AgentConfig())
    provider: providers.Object[LLMProvider | None] = providers.Object(None)
    provider_resolver: providers.Object[ProviderResolver | None] = providers.Object(None)
    memory_store: providers.Object[MemoryStore | None] = providers.Object(None)
    retriever: providers.Object[Retriever | None] = providers.Object(None)
    tool_registry: providers.Singleton[ToolRegistry] = providers.Singleton(
        _default_tool_registry, retriever=retriever
    )
    hook_executor: providers.Singleton[HookExecutor] = providers.Singleton(HookExecutor)
    #: Capabilities (``agcore.agent.capability``) the turns run with, after agcore's own.
    capabilities: providers.Object[tuple[Any, ...]] = providers.Object(())


async def bundle_resolve_provider(bundle: RuntimeBundle, session: Any, request: LLMRequest) -> LLMProvider:
    """The provider for the next model call: the resolver's answer (awaited if need be) when the
    bundle has a resolver, else ``bundle.provider()``. ``ConfigError`` when there is neither, or the
    resolver returns something that is not a provider."""
    resolver = bundle.provider_resolver()
    if resolver is None:
        provider = bundle.provider()
        if provider is None:
            raise ConfigError(
                "The bundle has no provider and no provider_resolver: set one with "
                "AgentBuilder.provider(...), .model('anthropic:<model>') or .provider_resolver(fn).",
                piece="provider",
            )
        return provider
    chosen: Any = resolver(session, request)
    if inspect.isawaitable(chosen):
        chosen = await chosen
    # A cheap duck check (runtime-checkable Protocol isinstance is slow on 3.11; this runs per call).
    if chosen is None or not callable(getattr(chosen, "stream", None)):
        raise ConfigError(
            f"The provider_resolver returned {chosen!r}, not an LLMProvider: make it return a "
            "provider (e.g. agcore.llm.create_provider('anthropic:<model>')) for every call.",
            piece="provider_resolver",
        )
    return cast(LLMProvider, chosen)


# ------------------------------------------------------------------------------ memory tools


def retrieve_tool(
    retriever: Retriever, *, namespace: str | None = None, max_limit: int = 20, name: str = RETRIEVE_TOOL
) -> Tool:
    """The ``retrieve`` tool: the model searches ``retriever`` (in ``namespace``, None for all) and
    gets back the hits as JSON objects with ``id``, ``score``, ``content`` and ``metadata``."""

    async def retrieve(query: str, limit: int = 5) -> Any:
        """Search long-term memory and knowledge for what is relevant to a query.

        Args:
            query: What to look for, in a few words or a question.
            limit: How many results to return at most (1 to 20).
        """
        count = max(1, min(limit, max_limit))
        try:
            hits = await retriever.retrieve(query, limit=count, namespace=namespace)
        except MemoryStoreError as exc:
            raise ToolError(
                f"Memory search failed: {exc}. Go on without it, or try again later.", tool_name=name
            ) from exc
        if not hits:
            return f"Nothing found for {query!r}. Try other words, or go on without it."
        return [
            {"id": h.item.id, "score": round(h.score, 4), "content": h.item.content,
             "metadata": h.item.metadata}
            for h in hits
        ]

    made = Tool.from_function(retrieve, name=name, read_only=True)
    _made_for[made] = retriever
    return made


def remember_tool(
    store: MemoryStore, *, namespace: str = DEFAULT_NAMESPACE, name: str = REMEMBER_TOOL
) -> Tool:
    """The ``remember`` tool: the model stores a fact in ``store`` (in ``namespace``) for later."""

    async def remember(content: str) -> str:
        """Store a fact in long-term memory so it can be retrieved in later conversations.

        Args:
            content: The fact to remember, self-contained (it is read later without this conversation).
        """
        if not content.strip():
            raise ToolError("Nothing to remember: pass the fact as `content`.", tool_name=name)
        try:
            item = await store.add(content, namespace=namespace, metadata={"source": "agent"})
        except MemoryStoreError as exc:
            raise ToolError(f"Could not store the memory: {exc}. Go on without it.", tool_name=name) from exc
        return f"Remembered (id {item.id})."

    made = Tool.from_function(remember, name=name)
    _made_for[made] = store
    return made


def register_memory_tools(bundle: RuntimeBundle, *, remember: bool = False) -> list[Tool]:
    """Put the memory tools into ``bundle.tool_registry()``: ``retrieve`` when the bundle has a
    retriever, and ``remember`` when asked and the bundle has a memory store. Returns the tools added.

    Idempotent: a memory tool already made for the same retriever/store is kept; one made for another
    is replaced; a tool of that name the application registered itself is left alone.
    """
    registry = bundle.tool_registry()
    wanted: list[tuple[str, object, Callable[[], Tool]]] = []
    retriever = bundle.retriever()
    if retriever is not None:
        wanted.append((RETRIEVE_TOOL, retriever, lambda: retrieve_tool(retriever)))
    store = bundle.memory_store()
    if remember:
        if store is None:
            raise ConfigError(
                "The remember tool needs a memory store: set one with AgentBuilder.memory_store(...) "
                "or bundle.memory_store.override(providers.Object(store)).",
                piece="memory_store",
            )
        wanted.append((REMEMBER_TOOL, store, lambda: remember_tool(store)))
    added: list[Tool] = []
    for tool_name, source, make in wanted:
        existing = registry.get(tool_name)
        if existing is not None:
            made_from = _made_for.get(existing)
            if made_from is None or made_from is source:
                continue  # the application's own tool, or ours for this very source
        added.append(registry.register(make(), replace=True))
    return added
