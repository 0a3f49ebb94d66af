"""``compile_agent``: an agcore agent and its bundle as a LangGraph ``StateGraph``.

```
START -> model --(tool calls)--> tools --Send--> tool (one task per call) --> tools
                    ^  |                   |  ^                                          |
                    |  +--(no calls)-> END |  +-- confirm (interrupt) <------------------+
                    +----------------------+--- client (interrupt; after client_tools)
```
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, cast

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.base import maybe_add_typed_methods
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agcore.integrations.langgraph._model_nodes import ModelNodes
from agcore.integrations.langgraph._serde import AgentSerializer
from agcore.integrations.langgraph._shell import ThreadSessions
from agcore.integrations.langgraph._state import AgentState, GraphInput, serde_allowlist
from agcore.integrations.langgraph._tool_nodes import ToolNodes

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.types import Durability

    from agcore.agent import Agent, AgentConfig, RuntimeBundle

__all__ = ["build_graph", "compile_agent", "default_durability", "recursion_limit", "typed_checkpointer"]


def recursion_limit(config: AgentConfig) -> int:
    """LangGraph's step cap for one run: a backstop behind ``max_turns``, which the ``model`` node
    enforces exactly as the loop does. A model call takes one step, a tool round two to four, plus
    one per confirmation and per call of a sequential batch."""
    return 8 * config.max_turns + 64


def typed_checkpointer(checkpointer: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """``checkpointer`` for this graph, its serializer knowing agcore's types (``serde_allowlist``).

    The graph's checkpoints hold agcore's types and LangGraph's own, nothing else, so a stock
    serializer is replaced (on a shallow copy: the caller's saver is unchanged, the storage shared)
    by one that loads exactly those, typed, with no "unregistered type" warnings and no other class
    imported from the database, and writes agcore's messages as their own JSON (``AgentSerializer``).
    A serializer of the caller's own (encrypted, say) keeps its settings and has agcore's types added
    to its allowlist."""
    serde = checkpointer.serde
    if type(serde) is JsonPlusSerializer and not serde.pickle_fallback:
        typed = copy.copy(checkpointer)
        typed.serde = maybe_add_typed_methods(
            AgentSerializer(allowed_msgpack_modules=sorted(serde_allowlist()))
        )
        return typed
    return checkpointer.with_allowlist(serde_allowlist())


def default_durability(checkpointer: BaseCheckpointSaver[Any]) -> Durability:
    """How often a ``GraphSession`` on ``checkpointer`` writes checkpoints when not told: after every
    step (``"sync"``) when they outlive the process, so a crash loses nothing that finished; once a
    run ends (``"exit"``) for an ``InMemorySaver``, whose checkpoints die with the process anyway.
    After every run, however it ends (done, an interrupt, an error, cancelled), the thread's
    checkpoint is the same either way: LangGraph writes it, with the unfinished step's pending
    writes, on the way out. Only a reader during a run (``aget_state`` from another task) and the
    step-by-step history (``aget_state_history``) see less; pass ``durability="sync"`` for those.
    The per-step writes cost 8% of a tool-call turn's instructions on the LangGraph benchmark."""
    return "exit" if isinstance(checkpointer, InMemorySaver) else "sync"


def compile_agent(
    agent: Agent,
    bundle: RuntimeBundle,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    *,
    name: str | None = None,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """``agent`` with ``bundle`` as a compiled LangGraph graph (see the package docstring).

    Invoke it with ``{"input": "..."}`` and a ``thread_id`` in ``config["configurable"]``; the state's
    ``messages`` are the history. ``checkpointer`` is any LangGraph checkpointer (``InMemorySaver``,
    ``AsyncSqliteSaver``...); confirmations and client tools need one, as every LangGraph interrupt
    does. agcore's types are added to its serializer's msgpack allowlist."""
    return build_graph(agent, bundle, checkpointer, name=name)[0]


def build_graph(
    agent: Agent,
    bundle: RuntimeBundle,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    *,
    name: str | None = None,
) -> tuple[CompiledStateGraph[Any, Any, Any, Any], ThreadSessions]:
    """``compile_agent``'s graph and the thread sessions its nodes run on (``GraphSession`` attaches
    its own)."""
    threads = ThreadSessions(agent, bundle)
    model = ModelNodes(threads)
    tools = ToolNodes(threads)
    graph: StateGraph[Any, Any, Any, Any] = StateGraph(AgentState, input_schema=GraphInput)
    graph.add_node("model", model.model, destinations=("model", "tools", END))
    graph.add_node("tools", tools.tools, destinations=("tool", "confirm", "client", "model", END))
    graph.add_node("confirm", tools.confirm, destinations=("tool", "tools", END))
    graph.add_node("tool", cast(Any, tools.tool))  # its input is a ToolTask (Send), not the state
    graph.add_node("client", tools.client, destinations=("model", END))
    graph.add_edge(START, "model")
    graph.add_edge("tool", "tools")
    if checkpointer is not None:
        checkpointer = typed_checkpointer(checkpointer)
    compiled = graph.compile(checkpointer=checkpointer, name=name or agent.name)
    limit = recursion_limit(bundle.config())
    return compiled.with_config(recursion_limit=limit), threads
