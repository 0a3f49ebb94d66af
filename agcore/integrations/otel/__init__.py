"""OpenTelemetry tracing for agcore runs, following the GenAI semantic conventions.

Needs the ``otel`` extra (``pip install 'agcore[otel]'``, which installs ``opentelemetry-api`` only:
the application chooses the SDK and the exporter)::

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from agcore.integrations.otel import OpenTelemetryPlugin

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    bundle = AgentBuilder().model("anthropic:claude-sonnet-4-6").plugins(
        OpenTelemetryPlugin(provider)
    ).build()

Each turn is an ``invoke_agent {agent}`` span with ``chat {model}`` and ``execute_tool {tool}``
children; see ``OpenTelemetryPlugin`` for the attributes.
"""

from __future__ import annotations

try:
    import opentelemetry.trace as _trace  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "agcore.integrations.otel needs the OpenTelemetry API: install it with "
        "`pip install 'agcore[otel]'` (and an SDK such as opentelemetry-sdk to export spans)"
    ) from exc

from agcore.integrations.otel._plugin import OpenTelemetryPlugin

__all__ = ["OpenTelemetryPlugin"]
