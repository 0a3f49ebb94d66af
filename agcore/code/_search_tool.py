"""The ``search_code`` tool: the code index offered to the model, hits as paths, line ranges and code."""

from __future__ import annotations

from agcore.code._index import CodeHit, CodeIndex
from agcore.tools import Tool, ToolError

__all__ = ["format_hits", "search_code_tool"]

_MAX_LIMIT = 20
_MAX_HIT_LINES = 60


def search_code_tool(
    index: CodeIndex, *, name: str = "search_code", max_hit_lines: int = _MAX_HIT_LINES
) -> Tool:
    """A tool that searches ``index`` by meaning and by words, returning ranked chunks with their
    paths and line ranges (each cut to ``max_hit_lines`` lines; the model reads more with its file
    tool). It does not refresh the index: run ``index.watch()`` beside the agent for that."""

    async def search_code(query: str, limit: int = 5, under: str = "") -> str:
        """Search the workspace's code by meaning and by words: where something is done, defined or
        used. Returns the best matching functions, classes and code blocks with file paths and line
        ranges. Use it before reading files when you do not know where to look.

        Args:
            query: What you are looking for, in words or identifiers (e.g. "retry with backoff",
                "HybridRetriever", "where are sessions saved").
            limit: How many results (1 to 20).
            under: Only files whose path (relative to the workspace) starts with this, e.g.
                "tests/" or "src/billing"; empty for the whole workspace.
        """
        if not 1 <= limit <= _MAX_LIMIT:
            raise ToolError(f"limit must be between 1 and {_MAX_LIMIT}, got {limit}.")
        if not query.strip():
            raise ToolError("query is empty: say what code you are looking for.")
        prefix = under.strip().removeprefix("./") or None
        hits = await index.search(query, limit=limit, under=prefix)
        where = f" under {prefix!r}" if prefix else ""
        return format_hits(hits, max_hit_lines=max_hit_lines) or f"No code{where} matches {query!r}."

    return Tool.from_function(search_code, name=name, read_only=True)


def format_hits(hits: list[CodeHit], *, max_hit_lines: int = _MAX_HIT_LINES) -> str:
    """Hits as the model reads them: a ``path:start-end (symbol)`` line, then the code."""
    blocks: list[str] = []
    for rank, hit in enumerate(hits, start=1):
        label = f" ({hit.symbol})" if hit.symbol else ""
        lines = hit.text.splitlines()
        code = "\n".join(lines[:max_hit_lines])
        if len(lines) > max_hit_lines:
            code += f"\n… {len(lines) - max_hit_lines} more lines (read the file for them)"
        blocks.append(f"{rank}. {hit.path}:{hit.start_line}-{hit.end_line}{label}\n{code}")
    return "\n\n".join(blocks)
