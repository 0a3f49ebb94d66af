"""``AgentBuilder``: assemble a ``RuntimeBundle`` fluently, validated in one place.

```python
bundle = (
    AgentBuilder()
    .model("anthropic:claude-sonnet-4-6", max_retries=3)   # or .provider(p) / .provider_resolver(fn)
    .tools(read_file, *workspace_tools(ws))
    .plugins(AuditPlugin())
    .retriever(my_retriever)                                 # offered to the model as `retrieve`
    .config(max_turns=20, max_cost_usd=1.0)
    .build()
)
```

Setters only record; ``build()`` checks everything and raises ``ConfigError`` naming the piece to fix
(``.piece``): no provider and no resolver, both ``.provider()`` and ``.model()``, a model spec the
factory cannot serve, a tool name given twice, a plugin without agcore hooks, a config value out of
range. Tools given with ``.tools()`` are added to the ``.tool_registry()`` registry when both are given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import pluggy
from pydantic import ValidationError

from agcore.agent._backend_names import LOOP_BACKEND
from agcore.agent._config import AgentConfig
from agcore.agent._errors import ConfigError
from agcore.agent.capability import Capability
from agcore.hooks import HookExecutor
from agcore.llm.errors import LLMError
from agcore.llm.factory import create_provider
from agcore.llm.provider import LLMProvider
from agcore.memory import MemoryStore, Retriever
from agcore.tools import Tool, ToolNameCollisionError, ToolRegistry

if TYPE_CHECKING:
    from agcore.agent._bundle import ProviderResolver, RuntimeBundle

__all__ = ["AgentBuilder"]


def _same(value: Any) -> Any:
    return value


class AgentBuilder:
    """Collects the parts of a ``RuntimeBundle``; ``build()`` validates and returns it."""

    def __init__(self) -> None:
        self._provider: LLMProvider | None = None
        self._model: tuple[str, dict[str, Any]] | None = None
        self._resolver: ProviderResolver | None = None
        self._tools: list[Tool | Callable[..., Any]] = []
        self._registry: ToolRegistry | None = None
        self._plugins: list[tuple[object, str | None]] = []
        self._entrypoints = False
        self._executor: HookExecutor | None = None
        self._memory_store: MemoryStore | None = None
        self._remember = False
        self._retriever: Retriever | None = None
        self._capabilities: list[Capability] = []
        self._memory_guidance: bool | str = True
        self._config = AgentConfig()
        self._config_changes: dict[str, Any] = {}

    # ------------------------------------------------------------------------------- the model

    def provider(self, provider: LLMProvider) -> AgentBuilder:
        """The provider every model call uses (unless a resolver picks another)."""
        self._provider = provider
        return self

    def model(self, spec: str, **options: Any) -> AgentBuilder:
        """A provider from ``agcore.llm.create_provider(spec, **options)``, made at ``build()``."""
        self._model = (spec, options)
        return self

    def provider_resolver(self, resolver: ProviderResolver) -> AgentBuilder:
        """``(session, request) -> LLMProvider`` (sync or async), asked before every model call."""
        self._resolver = resolver
        return self

    # ------------------------------------------------------------------------------- the tools

    def tools(self, *tools: Tool | Callable[..., Any] | Iterable[Tool | Callable[..., Any]]) -> AgentBuilder:
        """Tools to register: ``Tool`` s, plain functions (wrapped with ``Tool.from_function``), or
        iterables of them (``*workspace_tools(ws)`` or ``workspace_tools(ws)``). Adds to earlier calls."""
        for item in tools:
            if isinstance(item, Tool) or callable(item):
                self._tools.append(item)
            elif isinstance(item, str | bytes) or not isinstance(item, Iterable):
                raise _not_a_tool(item)
            else:
                for each in item:
                    if not (isinstance(each, Tool) or callable(each)):
                        raise _not_a_tool(each)
                    self._tools.append(each)
        return self

    def tool_registry(self, registry: ToolRegistry) -> AgentBuilder:
        """Use this registry (``.tools()`` are added to it)."""
        self._registry = registry
        return self

    # ------------------------------------------------------------------------------- the hooks

    def plugins(self, *plugins: object, entry_points: bool = False) -> AgentBuilder:
        """pluggy plugins to register (objects or modules with ``@agcore.hooks.hookimpl`` methods);
        ``entry_points=True`` also loads those published in the ``agcore`` entry-point group."""
        self._plugins.extend((plugin, None) for plugin in plugins)
        self._entrypoints = self._entrypoints or entry_points
        return self

    def plugin(self, plugin: object, name: str) -> AgentBuilder:
        """One plugin under a chosen name (for ``HookExecutor.unregister(name)`` later)."""
        self._plugins.append((plugin, name))
        return self

    def hook_executor(self, executor: HookExecutor) -> AgentBuilder:
        """Use this executor (``.plugins()`` are registered in it)."""
        self._executor = executor
        return self

    def capabilities(self, *capabilities: Capability) -> AgentBuilder:
        """Features on the turn's steps (``agcore.agent.capability.Capability``), run after agcore's
        own in the order given (docs/runtimes.md)."""
        for capability in capabilities:
            if not isinstance(capability, Capability):
                raise TypeError(f"capabilities() takes Capability objects, not {type(capability).__name__}: "
                                "subclass agcore.agent.Capability and override the steps you need")
        self._capabilities.extend(capabilities)
        return self

    # ------------------------------------------------------------------------------ the memory

    def memory_store(self, store: MemoryStore, *, remember_tool: bool = False) -> AgentBuilder:
        """The memory store; ``remember_tool=True`` also offers the model a ``remember`` tool."""
        self._memory_store = store
        self._remember = remember_tool
        return self

    def retriever(self, retriever: Retriever) -> AgentBuilder:
        """A retriever, offered to the model as the ``retrieve`` tool."""
        self._retriever = retriever
        return self

    def memory_guidance(self, guidance: bool | str = True) -> AgentBuilder:
        """Whether the system prompt says how to use memory (default: yes, when there is a memory
        store or retriever; see ``agcore.agent.memory_guidance``), or the text to say instead. A
        prompt that already has a ``# Memory`` section keeps it."""
        self._memory_guidance = guidance
        return self

    # ------------------------------------------------------------------------------ the config

    def config(self, config: AgentConfig | None = None, /, **fields: Any) -> AgentBuilder:
        """An ``AgentConfig``, and/or fields changing it (validated at ``build()``)."""
        if config is not None:
            if not isinstance(config, AgentConfig):
                raise TypeError(f"config() takes an AgentConfig, not {type(config).__name__}: "
                                "pass fields as keywords, e.g. .config(max_turns=10)")
            self._config = config
            self._config_changes.clear()
        self._config_changes.update(fields)
        return self

    def backend(self, name: str) -> AgentBuilder:
        """The runtime sessions run on: ``"loop"`` (the default) or an installed backend such as
        ``"langgraph"``; ``agcore.agent.open_session`` honours it (checked at ``build()``)."""
        self._config_changes["backend"] = name
        return self

    # ------------------------------------------------------------------------------- building

    def build(self) -> RuntimeBundle:
        """Validate the parts and return a new bundle holding them. ``ConfigError`` names what to fix."""
        # Imported here: dependency-injector is the costliest import of the kernel, and a program
        # that imports agcore.agent without building (a CLI's --help, type checks) need not pay it.
        from dependency_injector import providers

        from agcore.agent._bundle import RuntimeBundle, register_memory_tools

        config = self._build_config()
        if config.backend != LOOP_BACKEND:
            from agcore.agent._backends import check_backend

            check_backend(config.backend)
        provider = self._build_provider()
        self._check_memory()
        bundle = RuntimeBundle()
        # set_provides, not override(): the built parts are the bundle's own, so a test's
        # override() / reset_override() returns to them.
        bundle.config.set_provides(config)
        bundle.provider.set_provides(provider)
        bundle.provider_resolver.set_provides(self._resolver)
        bundle.memory_store.set_provides(self._memory_store)
        bundle.retriever.set_provides(self._retriever)
        bundle.capabilities.set_provides(tuple(self._capabilities))
        # The registry is made here, not by the bundle's default, so that the application's tools
        # are registered before the memory tools (an application tool named `retrieve` wins).
        registry = self._registry if self._registry is not None else ToolRegistry()
        self._add_tools(registry)
        bundle.set_provider("tool_registry", providers.Singleton(_same, registry))
        if self._executor is not None:
            bundle.set_provider("hook_executor", providers.Singleton(_same, self._executor))
        register_memory_tools(bundle, remember=self._remember)
        self._add_plugins(bundle.hook_executor())
        self._add_memory_guidance(bundle)
        return bundle

    def _add_memory_guidance(self, bundle: RuntimeBundle) -> None:
        from agcore.agent._memory_guidance import (
            MEMORY_GUIDANCE_PLUGIN,
            MemoryGuidancePlugin,
            memory_guidance,
        )

        wanted = self._memory_guidance
        text = wanted if isinstance(wanted, str) else memory_guidance(bundle) if wanted else None
        if not (text and text.strip()):
            return
        executor = bundle.hook_executor()
        if executor.plugin_manager.get_plugin(MEMORY_GUIDANCE_PLUGIN) is not None:
            executor.unregister(MEMORY_GUIDANCE_PLUGIN)  # an executor shared by several builds
        executor.register(MemoryGuidancePlugin(text), name=MEMORY_GUIDANCE_PLUGIN)

    def _build_config(self) -> AgentConfig:
        if not self._config_changes:
            return self._config
        try:
            return self._config.replace(**self._config_changes)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}"
                for err in exc.errors(include_url=False)
            )
            raise ConfigError(
                f"Invalid agent config ({problems}). Fix the value(s) given to AgentBuilder.config().",
                piece="config",
                cause=exc,
            ) from exc

    def _build_provider(self) -> LLMProvider | None:
        if self._provider is not None and self._model is not None:
            raise ConfigError(
                "Both .provider() and .model() were given: keep one (a resolver may still switch "
                "models per call).",
                piece="provider",
            )
        if self._model is not None:
            spec, options = self._model
            try:
                return create_provider(spec, **options)
            except (LLMError, ValueError, TypeError) as exc:
                raise ConfigError(
                    f"Cannot create the provider for model {spec!r}: {exc}", piece="provider", cause=exc
                ) from exc
        if self._provider is None and self._resolver is None:
            raise ConfigError(
                "No model to call: give the builder .provider(p), .model('anthropic:<model>') or "
                ".provider_resolver(fn).",
                piece="provider",
            )
        if self._provider is not None and not callable(getattr(self._provider, "stream", None)):
            raise ConfigError(
                f".provider() got {self._provider!r}, which is not an LLMProvider (it has no stream()): "
                "pass a provider, e.g. agcore.llm.create_provider('anthropic:<model>').",
                piece="provider",
            )
        if self._resolver is not None and not callable(self._resolver):
            raise ConfigError(
                f".provider_resolver() got {self._resolver!r}, which is not callable: pass a function "
                "(session, request) -> LLMProvider.",
                piece="provider_resolver",
            )
        return self._provider

    def _check_memory(self) -> None:
        if self._memory_store is not None and not isinstance(self._memory_store, MemoryStore):
            raise ConfigError(
                f".memory_store() got {type(self._memory_store).__name__}, which does not implement "
                "agcore.memory.MemoryStore (async add/get/search/delete/list).",
                piece="memory_store",
            )
        if self._retriever is not None and not isinstance(self._retriever, Retriever):
            raise ConfigError(
                f".retriever() got {type(self._retriever).__name__}, which does not implement "
                "agcore.memory.Retriever (async retrieve(query, *, limit, namespace)).",
                piece="retriever",
            )

    def _add_tools(self, registry: ToolRegistry) -> None:
        for item in self._tools:
            existing = registry.get(item.name if isinstance(item, Tool) else getattr(item, "__name__", ""))
            if existing is not None and (existing is item or getattr(existing, "__wrapped__", None) is item):
                continue  # this very tool is already there (the builder built with this registry before)
            try:
                registry.register(item)
            except ToolNameCollisionError as exc:
                raise ConfigError(
                    f"Two tools are named '{exc.tool_name}': keep one, or rename the other "
                    f"(@tool(name='...') or Tool.from_function(fn, name='...')).",
                    piece="tools",
                    cause=exc,
                ) from exc
            except (TypeError, ValueError) as exc:
                raise ConfigError(
                    f"Cannot make a tool of {item!r}: {exc}. Pass a Tool, or a function with type hints.",
                    piece="tools",
                    cause=exc,
                ) from exc

    def _add_plugins(self, executor: HookExecutor) -> None:
        for plugin, name in self._plugins:
            try:
                executor.register(plugin, name=name)
            except (pluggy.PluginValidationError, ValueError) as exc:
                raise ConfigError(
                    f"Cannot register the plugin {plugin!r}: {exc}. A plugin is an object or module "
                    "whose methods are marked with @agcore.hooks.hookimpl and named after agcore hooks.",
                    piece="plugins",
                    cause=exc,
                ) from exc
        if self._entrypoints:
            try:
                executor.load_entrypoints()
            except pluggy.PluginValidationError as exc:
                raise ConfigError(
                    f"A plugin from the 'agcore' entry-point group is invalid: {exc}. Fix or uninstall it.",
                    piece="plugins",
                    cause=exc,
                ) from exc


def _not_a_tool(item: object) -> ConfigError:
    what = f"the string {item!r}" if isinstance(item, str | bytes) else f"{type(item).__name__} {item!r}"
    return ConfigError(
        f".tools() takes tools, not {what}: pass a Tool, a function (decorated with @tool or plain, "
        "with type hints), or a list of them, e.g. .tools(get_weather) or "
        ".tools(Workspace(root).tools()) for the workspace tools (agcore.tools.workspace).",
        piece="tools",
    )
