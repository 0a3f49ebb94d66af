"""Plugin management: validation on register, names, unregister, listing, entry-point loading, and
bringing your own PluginManager."""

from __future__ import annotations

import importlib.metadata
import os
import types
from collections.abc import AsyncGenerator
from pathlib import Path

import pluggy
import pytest

from agcore.hooks import HookExecutor, hookimpl
from agcore.llm import AssistantMessage
from tests.hooks import make_ctx, make_message


class StopAfterTwo:
    """Published through the fake distribution's ``agcore`` entry point below."""

    @hookimpl
    def on_turn_end(self, ctx: object) -> bool:
        return getattr(ctx, "turn_index", 0) < 2


STOPPER = StopAfterTwo()


class NoHooks:
    def on_turn_end(self) -> None:  # not marked: pluggy ignores it
        ...


class Typo:
    @hookimpl
    def on_turn_ned(self) -> None: ...


class _FakeDistribution(importlib.metadata.Distribution):
    def __init__(self, name: str, entry_points: str) -> None:
        self._files = {"METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"}
        self._files["entry_points.txt"] = entry_points

    def read_text(self, filename: str) -> str | None:
        return self._files.get(filename)

    def locate_file(self, path: str | os.PathLike[str]) -> Path:
        return Path(os.fspath(path))


def _install(monkeypatch: pytest.MonkeyPatch, *dists: importlib.metadata.Distribution) -> None:
    monkeypatch.setattr(importlib.metadata, "distributions", lambda **_: iter(dists))


def test_unknown_hook_name_is_an_error_naming_plugin_and_hook_with_a_hint() -> None:
    executor = HookExecutor()

    with pytest.raises(pluggy.PluginValidationError) as info:
        executor.register(Typo(), name="typo-plugin")

    message = str(info.value)
    assert "'typo-plugin'" in message
    assert "'on_turn_ned'" in message
    assert "did you mean 'on_turn_end'?" in message
    assert "optionalhook=True" in message
    assert executor.plugins() == []
    assert not executor.has_impls("on_turn_ned")


def test_a_plugin_without_agcore_hooks_is_an_error() -> None:
    other_marker = pluggy.HookimplMarker("someone-else")

    class OtherProject:
        @other_marker
        def on_turn_end(self) -> None: ...

    for plugin in (NoHooks(), OtherProject()):
        with pytest.raises(pluggy.PluginValidationError, match=r"implements no agcore hook: mark its hook"):
            HookExecutor().register(plugin)


def test_optional_and_renamed_hooks_are_accepted() -> None:
    class Flexible:
        @hookimpl(optionalhook=True)
        def some_other_plugins_hook(self) -> None: ...

        @hookimpl(specname="on_turn_end")
        def stop_never(self) -> None: ...

    executor = HookExecutor()
    executor.register(Flexible(), name="flexible")

    assert executor.plugins()[0].hooks == ("on_turn_end", "some_other_plugins_hook")
    assert executor.has_impls("on_turn_end")


def test_impl_arguments_unknown_to_the_spec_are_rejected_by_pluggy() -> None:
    class WrongArgs:
        @hookimpl
        def on_turn_end(self, ctx: object, reply: object) -> None: ...

    with pytest.raises(pluggy.PluginValidationError, match=r"'on_turn_end'[\s\S]*reply"):
        HookExecutor().register(WrongArgs())


def test_names_plugins_listing_and_unregister() -> None:
    module = types.ModuleType("budget_plugin")

    @hookimpl
    def on_turn_start() -> None: ...

    module.on_turn_start = on_turn_start  # type: ignore[attr-defined]
    executor = HookExecutor()
    first, second = StopAfterTwo(), StopAfterTwo()

    assert executor.register(first) == "StopAfterTwo"
    assert executor.register(second) == "StopAfterTwo#2"
    assert executor.register(module) == "budget_plugin"
    with pytest.raises(ValueError, match="already registered"):
        executor.register(first, name="again")

    assert [(p.name, p.plugin, p.hooks) for p in executor.plugins()] == [
        ("StopAfterTwo", first, ("on_turn_end",)),
        ("StopAfterTwo#2", second, ("on_turn_end",)),
        ("budget_plugin", module, ("on_turn_start",)),
    ]
    name, plugin, hooks = executor.plugins()[2]  # a plain tuple too
    assert (name, plugin, hooks) == ("budget_plugin", module, ("on_turn_start",))

    assert executor.unregister("StopAfterTwo") is first
    assert executor.unregister(module) is module
    assert [p.name for p in executor.plugins()] == ["StopAfterTwo#2"]
    with pytest.raises(ValueError, match=r"no plugin 'StopAfterTwo' is registered.*StopAfterTwo#2"):
        executor.unregister("StopAfterTwo")
    with pytest.raises(ValueError, match="no plugin"):
        executor.unregister(first)


def test_blocked_names_are_not_registered() -> None:
    executor = HookExecutor()
    executor.plugin_manager.set_blocked("StopAfterTwo")

    assert executor.register(StopAfterTwo()) is None
    assert executor.plugins() == []


@pytest.mark.anyio
async def test_entry_point_plugins_are_loaded_and_called(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(
        monkeypatch,
        _FakeDistribution(
            "agcore-stopper",
            f"[agcore]\nstopper = {__name__}:STOPPER\n\n[console_scripts]\nignored = {__name__}:NoHooks\n",
        ),
        _FakeDistribution("unrelated", "[pytest11]\nx = nowhere:nothing\n"),
    )
    executor = HookExecutor()

    assert executor.load_entrypoints() == 1
    assert executor.load_entrypoints() == 0  # already registered under its entry-point name

    [info] = executor.plugins()
    assert (info.name, info.plugin, info.hooks) == ("stopper", STOPPER, ("on_turn_end",))
    assert [dist.metadata["Name"] for _, dist in executor.plugin_manager.list_plugin_distributions()] == [
        "agcore-stopper"
    ]
    assert await executor.on_turn_end(make_ctx(turn_index=1), make_message()) is True
    assert await executor.on_turn_end(make_ctx(turn_index=2), make_message()) is False


def test_load_entrypoints_on_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, _FakeDistribution("agcore-stopper", f"[agcore]\nstopper = {__name__}:STOPPER\n"))

    assert [p.name for p in HookExecutor(load_entrypoints=True).plugins()] == ["stopper"]
    assert HookExecutor().plugins() == []


def test_an_invalid_entry_point_plugin_is_reported_and_unregistered(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, _FakeDistribution("agcore-typo", f"[agcore]\ntypo = {__name__}:Typo\n"))
    executor = HookExecutor()

    with pytest.raises(pluggy.PluginValidationError, match="'on_turn_ned'") as info:
        executor.load_entrypoints()

    assert any("entry point 'typo'" in note for note in info.value.__notes__)
    assert executor.plugins() == []


def test_a_plugin_manager_for_another_project_is_refused() -> None:
    with pytest.raises(ValueError, match=r"pluggy\.PluginManager\('agcore'\)"):
        HookExecutor(pluggy.PluginManager("myapp"))


@pytest.mark.anyio
async def test_an_application_plugin_manager_is_used_and_may_be_shared() -> None:
    pm = pluggy.PluginManager("agcore")

    class AsyncWrapper:
        @hookimpl(wrapper=True)
        async def on_turn_end(self, message: AssistantMessage) -> AsyncGenerator[bool | None, bool]:
            yield None
            yield message.text != "stop"

    first = HookExecutor(pm)
    second = HookExecutor(pm)  # the specs are already there: not added twice
    assert first.plugin_manager is pm
    first.register(AsyncWrapper())

    assert second.has_impls("on_turn_end")
    assert await second.on_turn_end(make_ctx(), make_message("stop")) is False
    assert await second.on_turn_end(make_ctx(), make_message("go")) is True
