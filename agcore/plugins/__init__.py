"""Built-in hook plugins: watch a run without writing one.

```python
from agcore.agent import AgentBuilder
from agcore.plugins import AuditLogPlugin, LoggingPlugin

audit = AuditLogPlugin("logs")            # logs/audit.jsonl and logs/trace.jsonl
bundle = AgentBuilder().model("openai:gpt-5-mini").plugins(audit, LoggingPlugin()).build()
```

* ``AuditLogPlugin``: JSON Lines audit and trace logs, one trace id per turn.
* ``LoggingPlugin``: one readable line per event on the standard ``logging`` module.

For OpenTelemetry spans see ``agcore.integrations.otel.OpenTelemetryPlugin``.
"""

from __future__ import annotations

from agcore.plugins._audit import AUDIT_EVENTS, TRACE_EVENTS, AuditLogPlugin
from agcore.plugins._logging import LoggingPlugin

__all__ = ["AUDIT_EVENTS", "TRACE_EVENTS", "AuditLogPlugin", "LoggingPlugin"]
