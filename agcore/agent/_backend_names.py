"""The names of the session backends agcore knows, in one place: ``AgentConfig.backend``'s default,
``open_session`` and the CLI's ``--backend`` all read them from here (``agcore.agent`` exports them).
A module of its own, importing nothing, so that the config can name its default without importing
the backend machinery (``_backends``), which imports the sessions."""

from __future__ import annotations

__all__ = ["LANGGRAPH_BACKEND", "LOOP_BACKEND"]

#: agcore's own loop (``AgentSession``), always available: ``AgentConfig.backend``'s default.
LOOP_BACKEND = "loop"
#: LangGraph's graph (``agcore.integrations.langgraph.GraphSession``), with the ``langgraph`` extra.
LANGGRAPH_BACKEND = "langgraph"
