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
    definers = _Definers(files)
    weights = _NameWeights(files, definers, focus_name_set)
    edges = _reference_edges(files, definers, weights)
    ranks = _pagerank(list(files), edges, set(focus_paths) & files.keys())
    flowed = _flow_to_definitions(edges, ranks)
    scored: list[tuple[float, Symbol]] = []
    for path, info in files.items():
        for symbol in info.symbols:
            # Six ``value`` methods in one file share what flowed to ``value``; a small share of the
            # file's own rank keeps unused definitions of important files ahead of others.
            share = flowed.get((path, symbol.name), 0.0) / definers.same_name[(path, symbol.name)]
            score = share + 0.01 * ranks[path]
            if symbol.name in focus_name_set:
                score += 1.0
            scored.append((score, symbol))
    scored.sort(key=lambda pair: (-pair[0], pair[1].path, pair[1].start_line))
    return [symbol for _, symbol in scored]


_Edges = dict[str, dict[tuple[str, str], float]]  # referrer -> (definer, name) -> weight


class _Definers:
    """Which files define each name, at top level (functions, classes) or as a member (methods)."""

    def __init__(self, files: Mapping[str, FileSymbols]) -> None:
        self.top: dict[str, set[str]] = defaultdict(set)
        self.member: dict[str, set[str]] = defaultdict(set)
        self.same_name: dict[tuple[str, str], int] = defaultdict(int)
        for path, info in files.items():
            for symbol in info.symbols:
                where = self.top if symbol.qualified == symbol.name else self.member
                where[symbol.name].add(path)
                self.same_name[(path, symbol.name)] += 1

    def count(self, name: str) -> int:
        return len(self.top.get(name, ()) ) + len(self.member.get(name, ()))


class _NameWeights:
    """How much a use of a name says about a dependency. Less for names many files write (``value``,
    ``message``: ordinary words in code), for private names and for names many files define; more
    for focused names."""

    def __init__(self, files: Mapping[str, FileSymbols], definers: _Definers, focus: set[str]) -> None:
        self.file_count = max(1, len(files))
        self.users: dict[str, int] = defaultdict(int)
        for info in files.values():
            for name in {key.lstrip(".") for key in info.identifiers}:
                self.users[name] += 1
        self.definers = definers
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
        if name.startswith("_"):
            weight *= 0.1
        if self.definers.count(name) > _COMMON_DEFINERS:
            weight *= 0.1
        return weight


# A bare name (``parse(x)``) uses a top-level definition; an attribute (``obj.parse``) uses a method,
# or a module's function (``module.parse``), which counts for less: the object may be anything.
_BARE_TO_TOP = 1.0
_ATTRIBUTE_TO_MEMBER = 0.5
_ATTRIBUTE_TO_TOP = 0.3


def _reference_edges(files: Mapping[str, FileSymbols], definers: _Definers, weights: _NameWeights) -> _Edges:
    edges: _Edges = {}
    for path, info in files.items():
        out: dict[tuple[str, str], float] = defaultdict(float)
        for key, count in info.identifiers.items():
            name = key.lstrip(".")
            targets = ([(definers.top.get(name), _ATTRIBUTE_TO_TOP), (definers.member.get(name),
                        _ATTRIBUTE_TO_MEMBER)] if key.startswith(".")
                       else [(definers.top.get(name), _BARE_TO_TOP)])
            for where, factor in targets:
                if not where:
                    continue
                weight = math.sqrt(count) * factor * weights(name) / len(where)
                for definer in where:
                    if definer != path:
                        out[(definer, name)] += weight
        edges[path] = dict(out)
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
