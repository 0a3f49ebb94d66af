"""Ranking definitions by how much the rest of the repository uses them.

The idea is aider's repo map, written anew: files are nodes of a graph, and a file that writes a
name another file defines gets an edge to it. PageRank over that graph says which files the rest
leans on; each file's rank then flows along its edges to the very definitions it uses, so a symbol
scores by who uses it and how important they are. Names defined in many files (``run``, ``get``)
and private names (``_helper``) carry little weight; names the caller is focused on (mentioned in
the conversation) carry much more, and focused files get a head start in PageRank.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping

import numpy as np

from agcore.code._symbols import FileSymbols, Symbol

__all__ = ["rank_symbols"]

_DAMPING = 0.85
_ITERATIONS = 30
_COMMON_DEFINERS = 5
# Weight of a file's uses that point nowhere in particular: without it, a file whose only link is
# one weak word (``value``) would hand that word its whole rank.
_UNEXPLAINED = 1.0


def rank_symbols(
    files: Mapping[str, FileSymbols],
    *,
    focus_paths: Iterable[str] = (),
    focus_names: Iterable[str] = (),
) -> list[Symbol]:
    """Every definition of ``files``, most important first."""
    focus_name_set = set(focus_names)
    definers: dict[str, set[str]] = defaultdict(set)
    top_level: set[str] = set()
    for path, info in files.items():
        for symbol in info.symbols:
            definers[symbol.name].add(path)
            if symbol.qualified == symbol.name:
                top_level.add(symbol.name)
    weights = _NameWeights(files, definers, top_level, focus_name_set)
    edges = _reference_edges(files, definers, weights)
    ranks = _pagerank(list(files), edges, set(focus_paths) & files.keys())
    flowed = _flow_to_definitions(edges, ranks)
    scored: list[tuple[float, Symbol]] = []
    for path, info in files.items():
        for symbol in info.symbols:
            # A small share of the file's own rank keeps unused definitions of important files ahead
            # of unused ones elsewhere.
            score = flowed.get((path, symbol.name), 0.0) + 0.01 * ranks[path]
            if symbol.name in focus_name_set:
                score += 1.0
            scored.append((score, symbol))
    scored.sort(key=lambda pair: (-pair[0], pair[1].path, pair[1].start_line))
    return [symbol for _, symbol in scored]


_Edges = dict[str, dict[tuple[str, str], float]]  # referrer -> (definer, name) -> weight


class _NameWeights:
    """How much a use of a name says about a dependency. Less for names many files write (``value``,
    ``message``: ordinary words in code), for names defined only as methods (``obj.run`` may be any
    class's ``run``), for private names and for names many files define; more for focused names."""

    def __init__(
        self,
        files: Mapping[str, FileSymbols],
        definers: Mapping[str, set[str]],
        top_level: set[str],
        focus: set[str],
    ) -> None:
        self.file_count = max(1, len(files))
        self.users: dict[str, int] = defaultdict(int)
        for info in files.values():
            for name in info.identifiers:
                if name in definers:
                    self.users[name] += 1
        self.definers = definers
        self.top_level = top_level
        self.focus = focus
        self._cache: dict[str, float] = {}

    def __call__(self, name: str) -> float:
        weight = self._cache.get(name)
        if weight is None:
            weight = self._cache[name] = self._compute(name)
        return weight

    def _compute(self, name: str) -> float:
        weight = 10.0 if name in self.focus else 1.0
        # Inverse document frequency, floored so a name every file writes still counts a little.
        weight *= max(0.05, math.log(self.file_count / max(1, self.users[name])))
        if name not in self.top_level:
            weight *= 0.3
        if name.startswith("_"):
            weight *= 0.1
        if len(self.definers[name]) > _COMMON_DEFINERS:
            weight *= 0.1
        return weight


def _reference_edges(
    files: Mapping[str, FileSymbols], definers: Mapping[str, set[str]], weights: _NameWeights
) -> _Edges:
    edges: _Edges = {}
    for path, info in files.items():
        out: dict[tuple[str, str], float] = {}
        for name, count in info.identifiers.items():
            where = definers.get(name)
            if not where or where == {path}:
                continue
            weight = math.sqrt(count) * weights(name) / len(where)
            for definer in where:
                if definer != path:
                    out[(definer, name)] = weight
        edges[path] = out
    return edges


def _pagerank(nodes: list[str], edges: _Edges, focus: set[str]) -> dict[str, float]:
    """PageRank over the file graph, its edges summed per pair of files, in numpy (a Python loop
    over every edge costs seconds on a thousand files)."""
    if not nodes:
        return {}
    position = {n: i for i, n in enumerate(nodes)}
    pairs: dict[tuple[int, int], float] = defaultdict(float)
    for referrer, out in edges.items():
        for (definer, _), edge_weight in out.items():
            pairs[(position[referrer], position[definer])] += edge_weight
    source = np.fromiter((s for s, _ in pairs), dtype=np.int64, count=len(pairs))
    target = np.fromiter((t for _, t in pairs), dtype=np.int64, count=len(pairs))
    weight = np.fromiter(pairs.values(), dtype=np.float64, count=len(pairs))
    out_weight = np.bincount(source, weights=weight, minlength=len(nodes)) + _UNEXPLAINED
    share = weight / out_weight[source]
    unexplained = _UNEXPLAINED / out_weight
    teleport = np.array([1.0 if (n in focus or not focus) else 0.0 for n in nodes])
    teleport /= teleport.sum()
    rank = teleport.copy()
    for _ in range(_ITERATIONS):
        flowed = np.bincount(target, weights=rank[source] * share, minlength=len(nodes))
        lost = float(rank @ unexplained)
        rank = (1 - _DAMPING) * teleport + _DAMPING * (flowed + lost * teleport)
    return dict(zip(nodes, rank.tolist(), strict=True))


def _flow_to_definitions(edges: _Edges, ranks: Mapping[str, float]) -> dict[tuple[str, str], float]:
    flowed: dict[tuple[str, str], float] = defaultdict(float)
    for referrer, out in edges.items():
        total = sum(out.values()) + _UNEXPLAINED
        for key, weight in out.items():
            flowed[key] += ranks[referrer] * weight / total
    return flowed
