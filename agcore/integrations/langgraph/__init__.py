"""The LangGraph backend: an agcore agent compiled into a LangGraph ``StateGraph``.

Needs the ``langgraph`` extra (``pip install 'agcore[langgraph]'``). LangGraph runs on asyncio only.

```python
from agcore.integrations.langgraph import GraphSession, compile_agent

graph = compile_agent(agent, bundle, checkpointer=InMemorySaver())   # a CompiledStateGraph
await graph.ainvoke({"input": "hi"}, {"configurable": {"thread_id": "t1"}})

session = GraphSession(agent, "t1", bundle, checkpointer=saver)       # AgentSession's interface
result = await session.submit_turn("hi")
sessions = AgentGraph(agent, bundle, saver)                            # compiled once, for many
other = sessions.session("t2", confirm=ask_user)
```

Or, in the bootstrap: ``AgentBuilder().backend("langgraph")`` and ``agcore.agent.open_session``.

The state's ``messages`` are agcore's own ``AgentMessage``s, the nodes run the kernel's own steps
(``start``, ``model``, ``tools``, ``confirm``, ``tool`` one task per call, ``client``), hooks fire as
on ``AgentSession``, confirmations and client tools are ``interrupt()``s, and ``AgentEvent``s come out
of ``astream(..., stream_mode="custom")``. See docs/backends.md.
"""

from __future__ import annotations

try:
    import langgraph.graph as _langgraph  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "agcore.integrations.langgraph needs LangGraph: install it with `pip install 'agcore[langgraph]'`"
    ) from exc

from agcore.integrations.langgraph._graph import (
    compile_agent,
    default_durability,
    recursion_limit,
    typed_checkpointer,
)
from agcore.integrations.langgraph._serde import AgentSerializer
from agcore.integrations.langgraph._session import UNFINISHED, AgentGraph, GraphSession
from agcore.integrations.langgraph._state import (
    AgentState,
    GraphInput,
    ToolOutcome,
    ToolTask,
    serde_allowlist,
)
from agcore.integrations.langgraph._thread_state import load_thread, save_thread
from agcore.integrations.langgraph._tool_nodes import CLIENT_TOOLS, CONFIRMATION, confirmation_answer

__all__ = [
    "CLIENT_TOOLS",
    "CONFIRMATION",
    "AgentGraph",
    "AgentSerializer",
    "AgentState",
    "GraphInput",
    "GraphSession",
    "UNFINISHED",
    "ToolOutcome",
    "ToolTask",
    "compile_agent",
    "confirmation_answer",
    "default_durability",
    "load_thread",
    "recursion_limit",
    "save_thread",
    "serde_allowlist",
    "typed_checkpointer",
]
