"""Recall@5 of the code index on labelled questions about agcore's own code, and its times.

agcore/ is copied into a temporary directory and indexed with the offline default embedder
(``CodeHashingEmbedder``, no model), then with plain ``HashingEmbedder(512)`` for comparison (or
with a served model: ``--embedding-url``); each question is asked three ways: lexical only (BM25 over paths,
names and text), semantic only (vectors) and fused (reciprocal rank fusion of the two, the default).
A question counts as answered when one of the top five chunks lies in a file its label names. Times:
a cold index of the tree, a refresh after one edit, and the median query time per mode.

    python bench/code_search.py [--embedding-url http://127.0.0.1:8080/v1 --model NAME]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from agcore.code import CodeIndex
from agcore.memory import Embedder, HashingEmbedder, OpenAIEmbedder

ROOT = Path(__file__).resolve().parents[1]

#: (question, files that answer it). Written in the words a user or a model would use, not copied
#: from the docstrings.
QUESTIONS: list[tuple[str, tuple[str, ...]]] = [
    ("how is a tool's JSON schema built from a Python function signature", ("tools/_schema.py",)),
    ("merge rankings from several retrievers by reciprocal rank", ("memory/_retrievers.py",)),
    ("count tokens of a text without a tokenizer, Chinese characters too", ("context/_tokens.py",)),
    ("fix broken JSON in the arguments of a tool call", ("llm/_arguments.py",)),
    ("wait and retry when the API says rate limited, honour retry-after", ("llm/retry.py",)),
    ("full text search with BM25 over remembered items in SQLite", ("memory/_sqlite.py",)),
    ("refuse destructive shell commands such as rm -rf /",
     ("tools/_command_guard.py", "tools/_command_rules.py")),
    ("stop file tools from reading outside the workspace directory", ("tools/_path_guard.py",)),
    ("apply a unified diff patch to files", ("tools/workspace/_patch.py",)),
    ("run a command in a bubblewrap sandbox without network", ("tools/_sandbox.py",)),
    ("summarise old messages with the model when the context gets full", ("context/_compaction.py",
                                                                           "context/_summary.py")),
    ("shrink old tool results to their head and tail", ("context/_micro.py",)),
    ("parse a plan written in JSON or YAML into steps", ("agent/_plan_parser.py",)),
    ("hook specification for before_tool_call in plugins", ("hooks/_specs.py",)),
    ("write an audit trail of tool calls to a JSONL file", ("plugins/_audit.py", "plugins/_jsonl.py")),
    ("where do ids and timestamps come from, replaceable for replay", ("_clock.py",)),
    ("system prompt sections: identity, tool rules, safety", ("agent/_prompt.py",)),
    ("create a provider from a model string like anthropic:claude", ("llm/factory.py",)),
    ("context window size and price per million tokens of each model", ("llm/models.py",)),
    ("how much did the session cost in dollars", ("agent/_cost.py",)),
    ("save a session to SQLite and load it back later",
     ("memory/_session_sqlite.py", "memory/_session_store.py")),
    ("search file contents with a regular expression using ripgrep", ("tools/workspace/_grep.py",)),
    ("the model repeats the same tool call again and again", ("agent/_cycles.py",)),
    ("feature hashing of words and character trigrams into vectors", ("memory/_embedding.py",)),
    ("let one agent call another agent as a tool", ("agent/_subagent.py",)),
    ("OpenTelemetry spans for model calls and tool calls", ("integrations/otel/_plugin.py",)),
    ("Temporal workflow running a session durably", ("integrations/temporal/_session_workflow.py",)),
]

MODES = ("lexical", "semantic", "hybrid")


def answered(hits: list[str], label: tuple[str, ...]) -> bool:
    return any(hit.endswith(tuple("agcore/" + path for path in label)) for hit in hits)


async def measure(embedder: Embedder | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "agcore"
        shutil.copytree(ROOT / "agcore", tree, ignore=shutil.ignore_patterns("__pycache__"))
        async with CodeIndex(tmp, db_path=Path(tmp) / ".index.sqlite", embedder=embedder) as index:
            stats = await index.refresh()
            print(f"index: {stats.indexed} files, {stats.chunks} chunks, cold {stats.seconds:.2f} s "
                  f"(embedder {index.embedder_name})")
            edited = tree / "memory" / "_retrievers.py"
            edited.write_text(edited.read_text() + "\n# edited\n")
            again = await index.refresh()
            print(f"refresh after one edit: {again.indexed} file, {again.seconds * 1000:.0f} ms")
            print(f"\n{'mode':10s}{'recall@5':>10s}{'median query':>15s}")
            misses: dict[str, list[str]] = {}
            for mode in MODES:
                found = 0
                times: list[float] = []
                for question, label in QUESTIONS:
                    started = time.perf_counter()
                    hits = await index.search(question, limit=5, mode=mode)
                    times.append(time.perf_counter() - started)
                    if answered([h.path for h in hits], label):
                        found += 1
                    else:
                        misses.setdefault(mode, []).append(question)
                print(f"{mode:10s}{found:>5d}/{len(QUESTIONS)} {found / len(QUESTIONS):4.0%}"
                      f"{statistics.median(times) * 1000:>12.1f} ms")
            for mode, questions in misses.items():
                print(f"\nmissed by {mode}: " + "; ".join(questions))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedding-url", help="an OpenAI-compatible /v1 root serving embeddings")
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    embedders: list[Embedder | None] = [None, HashingEmbedder(512)]  # None: the index's default
    if args.embedding_url:
        embedders = [OpenAIEmbedder(args.embedding_url, args.model)]
    for embedder in embedders:
        anyio.run(measure, embedder)
        print()


if __name__ == "__main__":
    main()
