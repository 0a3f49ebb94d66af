"""``agcore models`` (the model registry) and ``agcore plugins`` (the entry-point hook plugins)."""

from __future__ import annotations

import pluggy
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agcore.cli._errors import CliError, ExitCode
from agcore.hooks import HookExecutor
from agcore.llm.models import ModelInfo, default_registry

__all__ = ["list_models", "list_plugins"]


def _price(value: float) -> str:
    return f"{value:g}" if value else "-"


def _capabilities(info: ModelInfo) -> str:
    flags = [("tools", info.supports_tools), ("vision", info.supports_vision),
             ("thinking", info.supports_thinking)]
    return ", ".join(name for name, on in flags if on) or "-"


def list_models(console: Console, provider: str | None) -> ExitCode:
    models = [m for m in default_registry if provider is None or m.provider == provider]
    if not models:
        known = sorted({m.provider for m in default_registry})
        raise CliError(f"No models for provider {provider!r}; the registry knows: {', '.join(known)}.",
                       ExitCode.USAGE)
    table = Table(title="models (prices in USD per million tokens)", title_justify="left")
    for column, justify in (("id", "left"), ("provider", "left"), ("context", "right"),
                            ("max out", "right"), ("$ in", "right"), ("$ out", "right"),
                            ("$ cache read", "right"), ("$ cache write", "right"), ("capabilities", "left")):
        table.add_column(column, justify=justify, no_wrap=column == "id")  # type: ignore[arg-type]
    for m in models:
        table.add_row(m.id, m.provider, f"{m.context_window:,}", f"{m.max_output_tokens:,}",
                      _price(m.input_usd_per_mtok), _price(m.output_usd_per_mtok),
                      _price(m.cache_read_usd_per_mtok), _price(m.cache_write_usd_per_mtok), _capabilities(m))
    console.print(table)
    return ExitCode.OK


def list_plugins(console: Console) -> ExitCode:
    try:
        executor = HookExecutor(load_entrypoints=True)
    except pluggy.PluginValidationError as exc:
        notes = " ".join(getattr(exc, "__notes__", []))
        raise CliError(f"An installed agcore plugin is invalid: {exc} {notes}".strip(),
                       ExitCode.CONFIG) from None
    except Exception as exc:  # a plugin's import failed: name it instead of showing a traceback
        raise CliError(f"Loading the agcore entry-point plugins failed: {type(exc).__name__}: {exc}",
                       ExitCode.CONFIG) from None
    infos = executor.plugins()
    if not infos:
        console.print("No plugins installed in the 'agcore' entry-point group.", markup=False)
        return ExitCode.OK
    table = Table(title="plugins (entry-point group 'agcore')", title_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("package", no_wrap=True)
    table.add_column("plugin")
    table.add_column("hooks")
    distributions = executor.plugin_manager.list_plugin_distinfo()
    packages = {id(plugin): f"{dist.project_name} {dist.version}" for plugin, dist in distributions}
    for info in infos:
        plugin = info.plugin
        where = getattr(plugin, "__name__", None) or f"{type(plugin).__module__}.{type(plugin).__qualname__}"
        table.add_row(Text(info.name), Text(packages.get(id(plugin), "-")), Text(where),
                      Text(", ".join(info.hooks)))
    console.print(table)
    return ExitCode.OK
