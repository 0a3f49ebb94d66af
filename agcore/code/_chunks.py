"""Cutting a source file into search chunks along its syntax: one per function or class (a long
class gives its head and each method; a long definition is cut in windows), the code between them
(imports, module constants) in windows of its own, and files no grammar reads in windows of lines.

A chunk that follows the code's own units is what a search hit should return: a whole function,
with its signature and body together, rather than a window that starts halfway through one.
"""

from __future__ import annotations

from dataclasses import dataclass

from agcore.code._symbols import Symbol, read_symbols

__all__ = ["CodeChunk", "chunk_source"]

DEFAULT_MAX_LINES = 80
_FALLBACK_OVERLAP = 10


@dataclass(frozen=True, slots=True)
class CodeChunk:
    """A piece of a file: lines ``start_line``..``end_line`` (1-based, inclusive) of ``path``, the
    definition it holds (``symbol``, qualified; None for code between definitions) and its text."""

    path: str
    start_line: int
    end_line: int
    symbol: str | None
    text: str


def chunk_source(path: str, source: bytes, *, max_lines: int = DEFAULT_MAX_LINES) -> list[CodeChunk]:
    """The chunks of one file, in line order. Blank stretches make no chunk."""
    lines = source.decode("utf-8", "replace").splitlines()
    symbols = read_symbols(path, source).symbols
    if not symbols:
        return _windows(path, lines, 1, len(lines), None, max_lines, _FALLBACK_OVERLAP, min_filled=1)
    spans = _definition_spans(symbols, max_lines)
    chunks: list[CodeChunk] = []
    covered_to = 0
    for start, end, symbol in spans:
        if start > covered_to + 1:
            chunks += _windows(path, lines, covered_to + 1, start - 1, None, max_lines, 0)
        chunks += _windows(path, lines, start, end, symbol, max_lines, 0)
        covered_to = max(covered_to, end)
    if covered_to < len(lines):
        chunks += _windows(path, lines, covered_to + 1, len(lines), None, max_lines, 0)
    return chunks


def _definition_spans(symbols: tuple[Symbol, ...], max_lines: int) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, symbol) spans: top-level definitions whole, or for a class
    longer than ``max_lines`` its head and its members separately."""
    spans: list[tuple[int, int, str]] = []
    covered_to = 0
    for symbol in symbols:
        if symbol.start_line <= covered_to:
            continue
        members = [s for s in symbols if s.qualified.startswith(symbol.qualified + ".")
                   and s.start_line > symbol.start_line]
        length = symbol.end_line - symbol.start_line + 1
        if length <= max_lines or not members:
            spans.append((symbol.start_line, symbol.end_line, symbol.qualified))
        else:
            spans.append((symbol.start_line, members[0].start_line - 1, symbol.qualified))
            spans += _definition_spans(tuple(members), max_lines)
        covered_to = symbol.end_line
    return spans


def _windows(
    path: str,
    lines: list[str],
    start: int,
    end: int,
    symbol: str | None,
    size: int,
    overlap: int,
    *,
    min_filled: int = 2,
) -> list[CodeChunk]:
    """Lines ``start``..``end`` in windows of ``size`` lines (each next one starting ``overlap``
    lines before the last ended), leaving out windows with fewer than ``min_filled`` non-blank
    lines (a definition always counts; a lone blank-and-comment line between two does not)."""
    chunks: list[CodeChunk] = []
    step = max(1, size - overlap)
    first = start
    while first <= end:
        last = min(end, first + size - 1)
        text = "\n".join(lines[first - 1 : last])
        if sum(1 for line in lines[first - 1 : last] if line.strip()) >= (1 if symbol else min_filled):
            chunks.append(CodeChunk(path, first, last, symbol, text))
        if last == end:
            break
        first += step
    return chunks
