"""``RuntimeBundle`` (parts, override(), provider resolution, memory tools) and ``AgentBuilder``."""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping
from typing import Any

import pytest
from dependency_injector import providers

from agcore.agent import (
    AgentBuilder,
    AgentConfig,
    BasicAgent,
    ConfigError,
    RuntimeBundle,
    bundle_resolve_provider,
    register_memory_tools,
)
from agcore.hooks import HookContext, HookExecutor, hookimpl
from agcore.llm import LLMProvider, register_provider_factory
from agcore.llm.types import AssistantMessage, LLMRequest, TextBlock, ToolUseBlock, UserMessage
from agcore.memory import (
    DEFAULT_NAMESPACE,
    MemoryItem,
    MemoryStore,
    MemoryStoreError,
    RetrievedItem,
    Retriever,
)
from agcore.testing import ScriptedProvider
from agcore.tools import Tool, ToolContext, ToolRegistry

REQUEST = LLMRequest.build([UserMessage(content="hi")])
CTX = ToolContext(session_id="s1")


class TinyMemory:
    """An in-test MemoryStore and Retriever: word overlap as the score."""

    def __init__(self, *texts: str) -> None:
        self.items: dict[str, MemoryItem] = {}
        self.calls: list[tuple[str, int, str | None]] = []
        self.fail = False
        for i, text in enumerate(texts):
            self.items[f"m{i}"] = MemoryItem(id=f"m{i}", content=text, metadata={"n": i})

    async def add(self, content: str, *, namespace: str = DEFAULT_NAMESPACE,
                  metadata: Mapping[str, Any] | None = None, id: str | None = None) -> MemoryItem:
        item = MemoryItem(content=content, namespace=namespace, metadata=dict(metadata or {}),
                          **({"id": id} if id else {}))
        self.items[item.id] = item
        return item

    async def get(self, id: str) -> MemoryItem | None:
        return self.items.get(id)

    async def search(self, query: str, *, limit: int = 5, namespace: str | None = None,
                     metadata: Mapping[str, Any] | None = None) -> list[RetrievedItem]:
        return await self.retrieve(query, limit=limit, namespace=namespace)

    async def delete(self, id: str) -> bool:
        return self.items.pop(id, None) is not None

    async def list(self, *, namespace: str | None = None, metadata: Mapping[str, Any] | None = None,
                   limit: int | None = None, offset: int = 0) -> list[MemoryItem]:
        return list(self.items.values())[offset:None if limit is None else offset + limit]

    async def retrieve(
        self, query: str, *, limit: int = 5, namespace: str | None = None
    ) -> builtins.list[RetrievedItem]:
        self.calls.append((query, limit, namespace))
        if self.fail:
            raise MemoryStoreError("the index is locked; close the other writer")
        words = set(query.lower().split())
        hits = [
            RetrievedItem(item=item, score=len(words & set(item.content.lower().split())) / len(words))
            for item in self.items.values()
            if words & set(item.content.lower().split())
        ]
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]


def call(name: str, **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(id=f"call_{name}", name=name, input=arguments)


def shout(text: str) -> str:
    """Say it loudly."""
    return text.upper()


def test_the_memory_double_satisfies_both_protocols() -> None:
    memory = TinyMemory()
    assert isinstance(memory, MemoryStore)
    assert isinstance(memory, Retriever)
    assert not isinstance(object(), Retriever)


# -------------------------------------------------------------------------------------- bundle


def test_a_fresh_bundle_has_defaults_and_its_own_parts() -> None:
    first, second = RuntimeBundle(), RuntimeBundle()
    assert first.config() == AgentConfig()
    assert first.provider() is None
    assert first.provider_resolver() is None
    assert first.memory_store() is None
    assert first.retriever() is None
    assert isinstance(first.tool_registry(), ToolRegistry)
    assert len(first.tool_registry()) == 0
    assert first.tool_registry() is first.tool_registry()
    assert first.tool_registry() is not second.tool_registry()
    assert isinstance(first.hook_executor(), HookExecutor)
    assert first.hook_executor() is first.hook_executor()


def test_override_swaps_the_provider_and_reset_restores_it() -> None:
    built = ScriptedProvider(["built"], model_id="built-model")
    bundle = AgentBuilder().provider(built).build()
    stand_in = ScriptedProvider(["stand-in"], model_id="stand-in-model")
    bundle.provider.override(providers.Object(stand_in))
    assert bundle.provider() is stand_in
    bundle.provider.reset_override()
    assert bundle.provider() is built
    with bundle.override_providers(provider=stand_in):
        assert bundle.provider() is stand_in
    assert bundle.provider() is built


def test_override_swaps_the_tool_registry_and_agents_see_it() -> None:
    bundle = AgentBuilder().provider(ScriptedProvider()).tools(shout).build()
    agent = BasicAgent(name="a")
    assert [d.name for d in agent.tool_definitions(bundle)] == ["shout"]
    other = ToolRegistry([Tool.client("ask_user")])
    bundle.tool_registry.override(providers.Object(other))
    assert bundle.tool_registry() is other
    assert [d.name for d in agent.tool_definitions(bundle)] == ["ask_user"]
    bundle.tool_registry.reset_override()
    assert [d.name for d in agent.tool_definitions(bundle)] == ["shout"]


@pytest.mark.anyio
async def test_resolve_provider_uses_the_provider_or_names_what_is_missing() -> None:
    bundle = RuntimeBundle()
    with pytest.raises(ConfigError) as info:
        await bundle_resolve_provider(bundle, None, REQUEST)
    assert info.value.piece == "provider"
    assert ".model(" in str(info.value)
    model = ScriptedProvider(["hello"])
    bundle.provider.override(providers.Object(model))
    resolved = await bundle_resolve_provider(bundle, None, REQUEST)
    assert resolved is model
    assert (await resolved.complete(LLMRequest.build(REQUEST.messages))).text == "hello"


@pytest.mark.anyio
async def test_resolver_sync_or_async_gets_the_session_and_request() -> None:
    cheap, strong = ScriptedProvider(model_id="cheap"), ScriptedProvider(model_id="strong")
    seen: list[tuple[object, LLMRequest]] = []

    def pick(session: object, request: LLMRequest) -> LLMProvider:
        seen.append((session, request))
        return cheap if len(request.messages) > 1 else strong

    async def pick_async(session: object, request: LLMRequest) -> LLMProvider:
        return pick(session, request)

    for resolver in (pick, pick_async):
        bundle = AgentBuilder().provider(cheap).provider_resolver(resolver).build()
        session = object()
        assert await bundle_resolve_provider(bundle, session, REQUEST) is strong
        long = LLMRequest.build([*REQUEST.messages, AssistantMessage(content=[TextBlock(text="x")]),
                                 UserMessage(content="y")])
        assert await bundle_resolve_provider(bundle, session, long) is cheap
        assert seen[-1] == (session, long)


@pytest.mark.anyio
async def test_a_resolver_returning_no_provider_is_a_config_error() -> None:
    bundle = AgentBuilder().provider_resolver(lambda session, request: None).build()  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError) as info:
        await bundle_resolve_provider(bundle, None, REQUEST)
    assert info.value.piece == "provider_resolver"
    assert "returned None" in str(info.value)


# ------------------------------------------------------------------------------- memory tools


@pytest.mark.anyio
async def test_a_present_retriever_is_the_retrieve_tool() -> None:
    memory = TinyMemory("the user likes green tea", "the deploy runs on fridays", "tea is hot")
    bundle = AgentBuilder().provider(ScriptedProvider()).retriever(memory).build()
    registry = bundle.tool_registry()
    assert registry.classify("retrieve") == "server"
    definition = next(d for d in BasicAgent(name="a").tool_definitions(bundle) if d.name == "retrieve")
    assert set(definition.input_schema["properties"]) == {"query", "limit"}
    assert definition.input_schema["required"] == ["query"]

    result = await registry.execute(call("retrieve", query="green tea", limit=2), CTX)
    assert not result.is_error
    hits = json.loads(result.text)
    assert [h["id"] for h in hits] == ["m0", "m2"]
    assert hits[0]["score"] == 1.0
    assert hits[1]["score"] == 0.5
    assert hits[0]["content"] == "the user likes green tea"
    assert hits[0]["metadata"] == {"n": 0}
    assert memory.calls[-1] == ("green tea", 2, None)


@pytest.mark.anyio
async def test_retrieve_clamps_the_limit_and_reports_no_hits_and_failures() -> None:
    memory = TinyMemory("alpha")
    bundle = RuntimeBundle()
    bundle.retriever.override(providers.Object(memory))  # before first use: the default registry has it
    registry = bundle.tool_registry()
    await registry.execute(call("retrieve", query="alpha", limit=1000), CTX)
    assert memory.calls[-1][1] == 20
    nothing = await registry.execute(call("retrieve", query="omega"), CTX)
    assert not nothing.is_error
    assert "Nothing found for 'omega'" in nothing.text
    memory.fail = True
    failed = await registry.execute(call("retrieve", query="alpha"), CTX)
    assert failed.is_error
    assert "Memory search failed" in failed.text
    assert "the index is locked" in failed.text
    bad = await registry.execute(call("retrieve", limit=3), CTX)
    assert bad.is_error
    assert "'query'" in bad.text


@pytest.mark.anyio
async def test_register_memory_tools_is_idempotent_and_follows_swaps() -> None:
    first, second = TinyMemory("one"), TinyMemory("two")
    bundle = AgentBuilder().provider(ScriptedProvider()).retriever(first).build()
    assert register_memory_tools(bundle) == []  # already there for this retriever
    tool = bundle.tool_registry()["retrieve"]

    bundle.retriever.override(providers.Object(second))
    (replaced,) = register_memory_tools(bundle)
    assert replaced is not tool
    await bundle.tool_registry().execute(call("retrieve", query="two"), CTX)
    assert second.calls
    assert not first.calls

    swapped = ToolRegistry()
    bundle.tool_registry.override(providers.Object(swapped))
    register_memory_tools(bundle)
    assert "retrieve" in swapped


@pytest.mark.anyio
async def test_an_application_retrieve_tool_is_left_alone() -> None:
    async def retrieve(query: str) -> str:
        """My own search."""
        return "mine"

    bundle = AgentBuilder().provider(ScriptedProvider()).tools(retrieve).retriever(TinyMemory("x")).build()
    result = await bundle.tool_registry().execute(call("retrieve", query="x"), CTX)
    assert result.text == "mine"


@pytest.mark.anyio
async def test_the_remember_tool_writes_to_the_memory_store() -> None:
    memory = TinyMemory()
    bundle = AgentBuilder().provider(ScriptedProvider()).memory_store(memory, remember_tool=True).build()
    registry = bundle.tool_registry()
    assert "retrieve" not in registry  # a store alone is not a retriever
    result = await registry.execute(call("remember", content="the user is called Ada"), CTX)
    assert not result.is_error
    (item,) = memory.items.values()
    assert item.content == "the user is called Ada"
    assert item.metadata == {"source": "agent"}
    assert item.id in result.text
    empty = await registry.execute(call("remember", content="  "), CTX)
    assert empty.is_error


def test_remember_without_a_store_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        register_memory_tools(RuntimeBundle(), remember=True)
    assert info.value.piece == "memory_store"


# ------------------------------------------------------------------------------------- builder


def test_build_needs_a_model() -> None:
    with pytest.raises(ConfigError) as info:
        AgentBuilder().tools(shout).build()
    assert info.value.piece == "provider"
    assert ".provider(" in str(info.value)
    assert ".provider_resolver(" in str(info.value)


def test_provider_and_model_together_are_inconsistent() -> None:
    with pytest.raises(ConfigError) as info:
        AgentBuilder().provider(ScriptedProvider()).model("scripted-test:m").build()
    assert info.value.piece == "provider"
    assert "keep one" in str(info.value)


def test_a_non_provider_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        AgentBuilder().provider("anthropic").build()  # type: ignore[arg-type]
    assert info.value.piece == "provider"


def test_model_uses_the_provider_factory() -> None:
    made: list[tuple[str, dict[str, Any]]] = []

    def factory(model: str, **options: Any) -> LLMProvider:
        made.append((model, options))
        return ScriptedProvider(model_id=model)

    register_provider_factory("scripted-test", factory)
    bundle = AgentBuilder().model("scripted-test:tiny-1", temperature_hint=0.5, cache=False).build()
    provider = bundle.provider()
    assert provider is not None
    assert provider.model_id == "tiny-1"
    assert made == [("tiny-1", {"temperature_hint": 0.5})]


def test_model_without_credentials_names_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError) as info:
        AgentBuilder().model("anthropic:claude-sonnet-4-5", cache=False).build()
    assert info.value.piece == "provider"
    assert "ANTHROPIC_API_KEY" in str(info.value)


def test_model_with_an_unknown_vendor_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        AgentBuilder().model("nobody:model-x").build()
    assert "'nobody:model-x'" in str(info.value)


def test_a_resolver_alone_is_enough() -> None:
    model = ScriptedProvider()
    bundle = AgentBuilder().provider_resolver(lambda session, request: model).build()
    assert bundle.provider() is None
    assert bundle.provider_resolver() is not None


def test_tools_are_added_to_a_given_registry() -> None:
    registry = ToolRegistry([Tool.client("pick_color")])
    bundle = (
        AgentBuilder()
        .provider(ScriptedProvider())
        .tool_registry(registry)
        .tools(shout, [Tool.client("ask_user")])
        .build()
    )
    assert bundle.tool_registry() is registry
    assert registry.names() == ["pick_color", "shout", "ask_user"]


def test_a_tool_name_given_twice_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        AgentBuilder().provider(ScriptedProvider()).tools(shout, Tool.client("shout")).build()
    assert info.value.piece == "tools"
    assert "'shout'" in str(info.value)
    # It names what the user can do with the builder (the registry's replace=True is not one).
    assert "replace=True" not in str(info.value)
    assert "name=" in str(info.value)


@pytest.mark.parametrize("given", ["read_file", ["read_file"], 42])
def test_a_tool_name_or_other_non_tool_is_refused_at_once(given: object) -> None:
    # A string used to be taken as an iterable of one-letter "tools" ('r', 'e', ...).
    with pytest.raises(ConfigError) as info:
        AgentBuilder().tools(given)  # type: ignore[arg-type]
    assert info.value.piece == "tools"
    assert "takes tools" in str(info.value)
    assert "Workspace(root).tools()" in str(info.value)


def test_config_fields_are_validated_at_build() -> None:
    builder = AgentBuilder().provider(ScriptedProvider())
    bundle = builder.config(AgentConfig(max_turns=7), max_tool_turns=3).build()
    assert (bundle.config().max_turns, bundle.config().max_tool_turns) == (7, 3)
    with pytest.raises(ConfigError) as info:
        AgentBuilder().provider(ScriptedProvider()).config(max_turns=0).build()
    assert info.value.piece == "config"
    assert "max_turns" in str(info.value)
    with pytest.raises(ConfigError) as typo:
        AgentBuilder().provider(ScriptedProvider()).config(max_turn=3).build()
    assert "max_turn" in str(typo.value)


def test_memory_parts_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        AgentBuilder().provider(ScriptedProvider()).retriever(object()).build()  # type: ignore[arg-type]
    assert info.value.piece == "retriever"
    with pytest.raises(ConfigError) as store:
        AgentBuilder().provider(ScriptedProvider()).memory_store(object()).build()  # type: ignore[arg-type]
    assert store.value.piece == "memory_store"


class StopAfterOneTurn:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def on_turn_end(self, ctx: HookContext, message: AssistantMessage) -> bool:
        self.seen.append(message.text)
        return False


@pytest.mark.anyio
async def test_plugins_are_registered_in_the_bundles_executor() -> None:
    plugin = StopAfterOneTurn()
    bundle = AgentBuilder().provider(ScriptedProvider()).plugins(plugin).build()
    executor = bundle.hook_executor()
    assert [info.plugin for info in executor.plugins()] == [plugin]
    ctx = HookContext(session_id="s", agent_name="a", turn_index=0)
    assert await executor.on_turn_end(ctx, AssistantMessage(content=[TextBlock(text="done")])) is False
    assert plugin.seen == ["done"]


def test_plugins_go_into_a_given_executor_under_a_chosen_name() -> None:
    executor = HookExecutor()
    bundle = (
        AgentBuilder()
        .provider(ScriptedProvider())
        .hook_executor(executor)
        .plugin(StopAfterOneTurn(), "stopper")
        .build()
    )
    assert bundle.hook_executor() is executor
    assert [info.name for info in executor.plugins()] == ["stopper"]


def test_an_object_without_hooks_is_not_a_plugin() -> None:
    class NotAPlugin:
        def on_turn_end(self) -> None: ...

    with pytest.raises(ConfigError) as info:
        AgentBuilder().provider(ScriptedProvider()).plugins(NotAPlugin()).build()
    assert info.value.piece == "plugins"
    assert "@agcore.hooks.hookimpl" in str(info.value)


def test_each_build_makes_a_new_bundle_and_rebuilding_is_harmless() -> None:
    builder = AgentBuilder().provider(ScriptedProvider()).tools(shout)
    first, second = builder.build(), builder.build()
    assert first.tool_registry() is not second.tool_registry()
    assert second.tool_registry().names() == ["shout"]
    shared = ToolRegistry()
    builder.tool_registry(shared)
    builder.build()
    builder.build()  # the same tools again: already there, not a collision
    assert shared.names() == ["shout"]


def test_plain_provider_is_kept_and_config_defaults() -> None:
    model = ScriptedProvider()
    bundle = AgentBuilder().provider(model).build()
    assert bundle.provider() is model
    assert bundle.config() == AgentConfig()
