"""The languages the repo map and the chunker read with tree-sitter, and how to find their definitions.

Each language's grammar comes from its own PyPI wheel (``tree-sitter-python``, ...; the ``code``
extra installs them): compiled grammars inside the wheel, so nothing is downloaded at run time. A
language whose wheel is missing is simply not parsed: its files fall back to line-based chunks and
do not appear in the repo map.

A language is a tree-sitter query whose ``@def`` captures are the definitions to list (the name is
the node's ``name`` field), a map from node type to the kind shown, and the node types that hold
methods (so ``def run`` inside ``class Agent`` reads ``Agent.run``).
"""

from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Language, Parser, Query

__all__ = [
    "LANGUAGES", "CodeLanguage", "Grammar", "grammar_for", "language_for_path", "parser_for",
    "require_tree_sitter",
]


@dataclass(frozen=True)
class CodeLanguage:
    """A language: its file suffixes, grammar wheel and definition query."""

    name: str
    suffixes: tuple[str, ...]
    module: str
    definitions: str
    kinds: dict[str, str]
    containers: frozenset[str] = frozenset()
    grammar_function: str = "language"
    #: Comments and string literals: their words are prose, not uses of a definition.
    prose: str = "(comment) @prose (string) @prose"


_JS_DEFS = """
(function_declaration) @def
(generator_function_declaration) @def
(class_declaration) @def
(method_definition) @def
(variable_declarator value: [(arrow_function) (function_expression)]) @def
"""
_JS_KINDS = {
    "function_declaration": "function", "generator_function_declaration": "function",
    "class_declaration": "class", "method_definition": "method", "variable_declarator": "function",
    "abstract_class_declaration": "class", "interface_declaration": "interface",
    "type_alias_declaration": "type", "enum_declaration": "enum",
}
_TS_DEFS = _JS_DEFS + """
(abstract_class_declaration) @def
(interface_declaration) @def
(type_alias_declaration) @def
(enum_declaration) @def
"""
_JS_PROSE = "(comment) @prose (string) @prose (template_string) @prose"
_JS_CONTAINERS = frozenset({"class_declaration", "abstract_class_declaration", "class"})

LANGUAGES: tuple[CodeLanguage, ...] = (
    CodeLanguage(
        "python", (".py", ".pyi"), "tree_sitter_python",
        "(function_definition) @def (class_definition) @def",
        {"function_definition": "def", "class_definition": "class"},
        frozenset({"class_definition"}),
    ),
    CodeLanguage("javascript", (".js", ".jsx", ".mjs", ".cjs"), "tree_sitter_javascript", _JS_DEFS,
                 _JS_KINDS, _JS_CONTAINERS, prose=_JS_PROSE),
    CodeLanguage("typescript", (".ts", ".mts", ".cts"), "tree_sitter_typescript", _TS_DEFS, _JS_KINDS,
                 _JS_CONTAINERS, "language_typescript", _JS_PROSE),
    CodeLanguage("tsx", (".tsx",), "tree_sitter_typescript", _TS_DEFS, _JS_KINDS, _JS_CONTAINERS,
                 "language_tsx", _JS_PROSE),
    CodeLanguage(
        "go", (".go",), "tree_sitter_go",
        "(function_declaration) @def (method_declaration) @def (type_spec) @def",
        {"function_declaration": "func", "method_declaration": "func", "type_spec": "type"},
        prose="(comment) @prose (interpreted_string_literal) @prose (raw_string_literal) @prose",
    ),
    CodeLanguage(
        "rust", (".rs",), "tree_sitter_rust",
        "(function_item) @def (function_signature_item) @def (struct_item) @def (enum_item) @def "
        "(trait_item) @def (type_item) @def (mod_item) @def",
        {"function_item": "fn", "function_signature_item": "fn", "struct_item": "struct",
         "enum_item": "enum", "trait_item": "trait", "type_item": "type", "mod_item": "mod"},
        frozenset({"trait_item", "impl_item"}),
        prose="(line_comment) @prose (block_comment) @prose (string_literal) @prose "
              "(raw_string_literal) @prose",
    ),
)

_BY_SUFFIX = {suffix: lang for lang in LANGUAGES for suffix in lang.suffixes}


def language_for_path(path: str) -> CodeLanguage | None:
    """The language of a file by its suffix, or None for a file no grammar reads."""
    dot = path.rfind(".")
    return _BY_SUFFIX.get(path[dot:].lower()) if dot >= 0 else None


def require_tree_sitter() -> None:
    """Raise ``ImportError`` saying how to install tree-sitter when it is missing."""
    try:
        importlib.import_module("tree_sitter")
    except ImportError as exc:
        raise ImportError("agcore.code reads source files with tree-sitter, which is not installed: "
                          "pip install 'agcore[code]'.") from exc


@dataclass(frozen=True)
class Grammar:
    """A loaded language: the tree-sitter language and its compiled definition and prose queries."""

    language: Language
    query: Query
    prose: Query


@cache
def _load_grammar(name: str) -> Grammar | None:
    spec = next(lang for lang in LANGUAGES if lang.name == name)
    try:
        from tree_sitter import Language, Query

        module: Any = importlib.import_module(spec.module)
    except ImportError:
        return None
    language = Language(getattr(module, spec.grammar_function)())
    return Grammar(language, Query(language, spec.definitions), Query(language, spec.prose))


def grammar_for(spec: CodeLanguage) -> Grammar | None:
    """The loaded grammar of ``spec``, or None when its wheel (or tree-sitter) is not installed."""
    return _load_grammar(spec.name)


# A tree-sitter Parser is not safe to share between threads; parsing runs in worker threads.
_parsers = threading.local()


def parser_for(spec: CodeLanguage, grammar: Grammar) -> Parser:
    """This thread's parser for ``spec``."""
    from tree_sitter import Parser

    cached: dict[str, Parser] | None = getattr(_parsers, "by_language", None)
    if cached is None:
        cached = _parsers.by_language = {}
    parser = cached.get(spec.name)
    if parser is None:
        parser = cached[spec.name] = Parser(grammar.language)
    return parser
