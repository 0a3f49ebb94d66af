"""``RepoMap``: the workspace's most used definitions, one line each, cut to a token budget.

Reading is incremental: a file is parsed again only when its stamp (mtime, size) changed since the
last build, so a build after a small edit costs a directory scan plus one parse. The ranking (see
``agcore.code._rank``) is redone only when something changed or the focus differs.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import TaskStatus

from agcore.code._files import DEFAULT_EXCLUDED_DIRS, FileStamp, scan_sources
from agcore.code._languages import LANGUAGES, require_tree_sitter
from agcore.code._map_cache import load_map_cache, save_map_cache
from agcore.code._rank import rank_symbols
from agcore.code._symbols import FileSymbols, Symbol, read_symbols
from agcore.context import estimate_tokens

__all__ = ["REPO_MAP_TITLE", "RepoMap"]

_log = logging.getLogger("agcore.code")

#: The heading to give the map in a system prompt: ``prompt.extra(repo_map.text, title=REPO_MAP_TITLE)``.
REPO_MAP_TITLE = "Repository map"
_INTRO = ("The most used definitions of the workspace, by file (line number, then signature). "
          "Read a file before changing it; this map is a summary, not the code.")


class RepoMap:
    """The symbols of the source files under ``root`` (functions, classes, methods with signatures),
    ranked by how much the rest of the code uses them and cut to ``max_tokens`` (as
    ``agcore.context.estimate_tokens`` counts them).

    ``await render()`` refreshes (only changed files are parsed again) and returns the text; ``text``
    is the last text rendered (for a ``system_prompt`` property, which must not wait); ``watch()``
    keeps it fresh in a task group. ``cache_path`` (a JSON file, written when something changed)
    keeps the parsed files across processes, so a new one parses only what changed since. Needs
    tree-sitter (``pip install 'agcore[code]'``).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        max_tokens: int = 1024,
        extensions: Iterable[str] | None = None,
        excluded_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRS,
        cache_path: str | os.PathLike[str] | None = None,
    ) -> None:
        require_tree_sitter()
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise NotADirectoryError(f"RepoMap needs a directory to map; {self.root} is not one.")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}.")
        self.max_tokens = max_tokens
        self.extensions = tuple(extensions or (s for lang in LANGUAGES for s in lang.suffixes))
        self.excluded_dirs = excluded_dirs
        self.text = ""
        self.cache_path = None if cache_path is None else Path(cache_path)
        self._files: dict[str, tuple[FileStamp, FileSymbols]] = (
            {} if self.cache_path is None else load_map_cache(self.cache_path))
        self._ranked: list[Symbol] | None = None
        self._text_budget: int | None = None  # the budget ``text`` was cut to, when unfocused
        self._lock = threading.Lock()

    @property
    def files(self) -> int:
        """How many source files the last build read."""
        return len(self._files)

    def build(
        self,
        *,
        max_tokens: int | None = None,
        focus_paths: Sequence[str] = (),
        focus_names: Sequence[str] = (),
    ) -> str:
        """Refresh, rank and render, blocking (``render`` runs this in a worker thread). Focused
        paths (relative to ``root``) and names rank first: pass what the conversation is about."""
        budget = max_tokens or self.max_tokens
        with self._lock:
            if self._refresh():
                self._ranked = None
                if self.cache_path is not None:
                    save_map_cache(self.cache_path, self._files)
            unfocused = not (focus_paths or focus_names)
            if unfocused and self._ranked is not None and self._text_budget == budget:
                return self.text  # nothing changed since this very text was made
            if not unfocused:
                ranked = rank_symbols(self._symbols(), focus_paths=focus_paths, focus_names=focus_names)
            else:
                if self._ranked is None:
                    self._ranked = rank_symbols(self._symbols())
                ranked = self._ranked
            self.text = _fit(ranked, budget)
            self._text_budget = budget if unfocused else None
            return self.text

    async def render(
        self,
        *,
        max_tokens: int | None = None,
        focus_paths: Sequence[str] = (),
        focus_names: Sequence[str] = (),
    ) -> str:
        """The map as text (empty when the workspace defines nothing), after reading what changed."""
        return await anyio.to_thread.run_sync(
            lambda: self.build(max_tokens=max_tokens, focus_paths=focus_paths, focus_names=focus_names))

    async def watch(
        self, *, interval: float = 2.0, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Render now, then again every ``interval`` seconds (a no-op scan when nothing changed),
        until cancelled: ``await tg.start(repo_map.watch)`` returns once ``text`` is ready, and the
        watch stops with its task group."""
        await self.render()
        task_status.started()
        while True:
            await anyio.sleep(interval)
            try:
                await self.render()
            except Exception as exc:  # the next tick tries again; ``text`` keeps the last good map
                _log.warning("repo map: refresh failed (%s: %s); retrying in %s s",
                             type(exc).__name__, exc, interval)

    def _symbols(self) -> dict[str, FileSymbols]:
        return {path: symbols for path, (_, symbols) in self._files.items()}

    def _refresh(self) -> bool:
        stamps = scan_sources(self.root, self.extensions, excluded_dirs=self.excluded_dirs)
        changed = self._files.keys() - stamps.keys()
        for gone in changed:
            del self._files[gone]
        for path, stamp in stamps.items():
            known = self._files.get(path)
            if known is not None and known[0] == stamp:
                continue
            try:
                source = (self.root / path).read_bytes()
            except OSError:
                continue
            self._files[path] = (stamp, read_symbols(path, source))
            changed.add(path)
        return bool(changed)


def _fit(ranked: list[Symbol], max_tokens: int) -> str:
    """The longest ranked prefix whose rendering fits ``max_tokens`` (a binary search: rendering is
    linear, so this costs a few renders, not one per symbol)."""
    containers = {(s.path, s.qualified): s for s in ranked}
    low, high, best = 0, len(ranked), ""
    while low <= high:
        middle = (low + high) // 2
        text = _render(ranked[:middle], containers)
        if estimate_tokens(text) <= max_tokens:
            best, low = text, middle + 1
        else:
            high = middle - 1
    return best


def _render(symbols: list[Symbol], containers: dict[tuple[str, str], Symbol]) -> str:
    if not symbols:
        return ""
    by_file: dict[str, list[Symbol]] = {}
    for symbol in symbols:  # files in the order of their best symbol
        chosen = by_file.setdefault(symbol.path, [])
        chosen.append(symbol)
        # A method is shown under its class, so the map never shows an orphan ``def run``.
        owner = symbol.qualified.rpartition(".")[0]
        while owner:
            if (container := containers.get((symbol.path, owner))) is not None:
                chosen.append(container)
            owner = owner.rpartition(".")[0]
    blocks = [_INTRO]
    for path, chosen in by_file.items():
        lines = [f"{path}:"]
        for symbol in sorted(set(chosen), key=lambda s: (s.start_line, -s.end_line)):
            indent = "  " * (1 + symbol.qualified.count("."))
            lines.append(f"{indent}{symbol.start_line}: {symbol.signature}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
