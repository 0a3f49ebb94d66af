"""Code intelligence for coding agents: a repo map for the system prompt, and a code index with a
``search_code`` tool.

```python
from agcore.agent import SystemPrompt
from agcore.code import REPO_MAP_TITLE, CodeIndex, RepoMap, search_code_tool

repo_map = RepoMap("/srv/repo", max_tokens=1024)
prompt = SystemPrompt("You are a coding agent.").extra(await repo_map.render(), title=REPO_MAP_TITLE)

async with CodeIndex("/srv/repo", db_path="/srv/repo/.agcore/code.sqlite") as index:
    async with anyio.create_task_group() as tg:
        await tg.start(index.watch)          # indexed; re-indexes changed files every 2 s
        tools = [search_code_tool(index)]    # hand to AgentBuilder().tools(...)
```

Both read source with tree-sitter and the code index searches with numpy: ``pip install
'agcore[code]'``. Importing this package loads neither; the classes do when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr

if TYPE_CHECKING:
    from agcore.code._chunks import CodeChunk, chunk_source
    from agcore.code._embedder import CodeHashingEmbedder
    from agcore.code._files import DEFAULT_EXCLUDED_DIRS
    from agcore.code._index import CodeHit, CodeIndex, IndexStats, SearchMode
    from agcore.code._repomap import REPO_MAP_TITLE, RepoMap
    from agcore.code._search_tool import format_hits, search_code_tool
    from agcore.code._symbols import FileSymbols, Symbol, read_symbols

_LAZY = {
    "CodeChunk": "agcore.code._chunks",
    "chunk_source": "agcore.code._chunks",
    "CodeHashingEmbedder": "agcore.code._embedder",
    "DEFAULT_EXCLUDED_DIRS": "agcore.code._files",
    "CodeHit": "agcore.code._index",
    "CodeIndex": "agcore.code._index",
    "IndexStats": "agcore.code._index",
    "SearchMode": "agcore.code._index",
    "REPO_MAP_TITLE": "agcore.code._repomap",
    "RepoMap": "agcore.code._repomap",
    "format_hits": "agcore.code._search_tool",
    "search_code_tool": "agcore.code._search_tool",
    "FileSymbols": "agcore.code._symbols",
    "Symbol": "agcore.code._symbols",
    "read_symbols": "agcore.code._symbols",
}

__all__ = [
    "DEFAULT_EXCLUDED_DIRS",
    "REPO_MAP_TITLE",
    "CodeChunk",
    "CodeHashingEmbedder",
    "CodeHit",
    "CodeIndex",
    "FileSymbols",
    "IndexStats",
    "RepoMap",
    "SearchMode",
    "Symbol",
    "chunk_source",
    "format_hits",
    "read_symbols",
    "search_code_tool",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, _LAZY)
