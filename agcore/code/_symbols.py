"""Definitions in one source file (functions, classes, methods with their signatures), read with
tree-sitter, and the identifiers the file uses (what the repo map counts as references).

References are counted from the file's words rather than from a per-language reference query: a
name defined elsewhere and written here is a use of it in every language we read, and a regex over
the bytes is far cheaper than walking the syntax tree in Python.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agcore.code._languages import CodeLanguage, grammar_for, language_for_path, parser_for

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["FileSymbols", "Symbol", "read_symbols"]

# An attribute keeps its dot (``.run``): the ranking tells ``obj.run`` from a bare ``run``.
_IDENTIFIER = re.compile(rb"\.?[A-Za-z_][A-Za-z0-9_]{2,}")
# Module paths in imports name modules, not definitions: ``from agcore.llm.models import X`` uses X,
# not a function called ``models``. (Python's ``from``/``import`` lines; other languages import
# by strings, which hold no identifiers worth counting either way.)
_IMPORT_PATH = re.compile(rb"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t]+[\w., \t]+$)", re.MULTILINE)
_SPACES = re.compile(r"\s+")
_PADDED_BRACKETS = re.compile(r"([(\[]) | ([)\]])|, ([)\]])")
_COMMENT_LINE = re.compile(rb"^\s*(#|//).*$", re.MULTILINE)
_MAX_SIGNATURE = 160


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition: ``name`` as written, ``qualified`` with its enclosing classes (``Agent.run``),
    its ``kind`` in the language's own word (``def``, ``class``, ``fn``...), the ``signature`` line
    and where it is (1-based lines)."""

    name: str
    qualified: str
    kind: str
    signature: str
    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class FileSymbols:
    """What one file defines and which identifiers it uses, with counts (attribute uses keyed with
    their dot: ``.run``)."""

    path: str
    symbols: tuple[Symbol, ...]
    identifiers: Counter[str]


def read_symbols(path: str, source: bytes) -> FileSymbols:
    """The definitions in ``source`` (the file at ``path``, relative) and the identifiers it uses. A
    file no installed grammar reads has no definitions, only identifiers."""
    spec = language_for_path(path)
    grammar = grammar_for(spec) if spec is not None else None
    if spec is None or grammar is None:
        return FileSymbols(path, (), _identifiers(source))
    from tree_sitter import QueryCursor

    tree = parser_for(spec, grammar).parse(source)
    prose = QueryCursor(grammar.prose).captures(tree.root_node).get("prose", [])
    identifiers = _identifiers(_without(source, prose))
    nodes = QueryCursor(grammar.query).captures(tree.root_node).get("def", [])
    symbols = [s for node in nodes if (s := _symbol(spec, path, node)) is not None]
    symbols.sort(key=lambda s: (s.start_line, s.end_line))
    return FileSymbols(path, tuple(symbols), identifiers)


def _identifiers(source: bytes) -> Counter[str]:
    return Counter(m.decode("ascii") for m in _IDENTIFIER.findall(_IMPORT_PATH.sub(b"", source)))


def _without(source: bytes, nodes: list[Node]) -> bytes:
    """``source`` with the bytes of ``nodes`` (comments, strings) blanked out."""
    if not nodes:
        return source
    kept: list[bytes] = []
    position = 0
    for node in sorted(nodes, key=lambda n: n.start_byte):
        if node.start_byte >= position:
            kept.append(source[position : node.start_byte])
            position = node.end_byte
    kept.append(source[position:])
    return b" ".join(kept)


def _symbol(spec: CodeLanguage, path: str, node: Node) -> Symbol | None:
    name_node = node.child_by_field_name("name")
    if name_node is None or name_node.text is None:
        return None
    containers = _enclosing_names(spec, node)
    if containers is None:
        return None
    name = name_node.text.decode("utf-8", "replace")
    kind = spec.kinds.get(node.type, node.type)
    return Symbol(
        name=name,
        qualified=".".join([*containers, name]),
        kind=kind,
        signature=_signature(node),
        path=path,
        # Decorators belong to their definition (a chunk must not cut ``@dataclass`` off its class).
        start_line=(node.parent if _decorated(node) else node).start_point[0] + 1,  # type: ignore[union-attr]
        end_line=node.end_point[0] + 1,
    )


def _decorated(node: Node) -> bool:
    return node.parent is not None and node.parent.type == "decorated_definition"


def _enclosing_names(spec: CodeLanguage, node: Node) -> list[str] | None:
    """The names of the classes (traits, impls) around ``node``, outermost first; None when a
    function encloses it: a helper local to a function is not part of the file's interface."""
    names: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in spec.kinds and parent.type not in spec.containers:
            return None
        if parent.type in spec.containers:
            named = parent.child_by_field_name("name") or parent.child_by_field_name("type")
            if named is not None and named.text is not None:
                names.append(named.text.decode("utf-8", "replace"))
        parent = parent.parent
    return names[::-1]


def _signature(node: Node) -> str:
    """The definition's head: its text up to the body, on one line (decorators and docstrings left
    out), cut at ``_MAX_SIGNATURE`` characters."""
    text = node.text or b""
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        text = text[: body.start_byte - node.start_byte]
    else:
        text = text.split(b"\n", 1)[0]
    text = _COMMENT_LINE.sub(b"", text)
    head = _SPACES.sub(" ", text.decode("utf-8", "replace")).strip().rstrip("{:").rstrip()
    head = _PADDED_BRACKETS.sub(lambda m: m.group(1) or m.group(2) or m.group(3), head)
    return head if len(head) <= _MAX_SIGNATURE else head[: _MAX_SIGNATURE - 1] + "…"
