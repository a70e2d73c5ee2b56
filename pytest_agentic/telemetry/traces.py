"""A campaign as an OpenTelemetry trace: the session, its runs, their model and tool calls.

Imported only when tracing is on (``settings.trace_settings``): it imports the OpenTelemetry SDK.

The trace of a session::

    agentic campaign                       the session (controller): campaign id, benchmark, seed, models
      invoke_agent task_07 oracle run1     one run (the process that ran it): verdict, failure mode, tokens, cost
        chat oracle                        one model call: litellm's own OpenTelemetry integration
        execute_tool fs_write              one tool call

Model-call spans come from litellm's integration (``litellm.integrations.opentelemetry``), so their
attributes are the ones litellm users see elsewhere; it runs in GenAI's latest semantic conventions
(``gen_ai.provider.name``, ``gen_ai.operation.name``, span kind CLIENT). litellm makes a call's span
on its logging thread, parented on the span the call's ``metadata`` names (``litellm_parent_otel_span``).
Under xdist each worker exports its own spans, parented on the session span whose context the
controller hands it (W3C ``traceparent``, in ``workerinput``): one trace per session.

Prompts, completions, tool arguments and results go into spans only when the user opts in; values of
credential variables are masked in every attribute, litellm's included.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from .._version import __version__
from ..run.records import RunRecord, ToolCallLog
from ..run.redact import redact
from .settings import TelemetryError, TraceSettings

#: ``service.name`` when ``OTEL_SERVICE_NAME`` (or ``OTEL_RESOURCE_ATTRIBUTES``) does not name one.
SERVICE_NAME = "pytest-agentic"
#: The metadata key through which litellm's integration finds the span to parent a call on.
PARENT_KEY = "litellm_parent_otel_span"
#: Characters of a tool's arguments or result kept in a span (when content is opted in).
MAX_CONTENT_CHARS = 8192


def exporter(protocol: str) -> SpanExporter:
    """OTLP's exporter for ``protocol``; it reads the endpoint, headers and timeout from the standard variables."""
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc
        except ImportError:
            raise TelemetryError("OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the package "
                                 "opentelemetry-exporter-otlp-proto-grpc (pip install it), or use http/protobuf") from None
        return Grpc()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    return Http()


class Tracing:
    """One process's tracer: the session span (controller) or the session's context (a worker)."""

    def __init__(self, settings: TraceSettings, secrets: list[str], span_exporter: SpanExporter | None = None) -> None:
        self.settings = settings
        self.secrets = secrets
        named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get("OTEL_RESOURCE_ATTRIBUTES", "")
        self.provider = TracerProvider(resource=Resource.create({} if named else {"service.name": SERVICE_NAME}))
        self.provider.add_span_processor(BatchSpanProcessor(span_exporter or exporter(settings.protocol)))
        self.tracer = self.provider.get_tracer("pytest_agentic", __version__)
        self.session: Span | None = None
        #: The context runs are parented on: the session span's, here or in the controller.
        self.parent: Context | None = None
        self._open: dict[int, Span] = {}
        self._lock = threading.Lock()
        self._model_calls: Any = None

    # -- the session ------------------------------------------------------------
    def start_session(self, attributes: Mapping[str, Any]) -> None:
        self.session = self.tracer.start_span("agentic campaign", attributes=self._clean(attributes))
        self.parent = trace.set_span_in_context(self.session)

    def carrier(self) -> dict[str, str]:
        """The session span's context as W3C headers, for a worker (``adopt``)."""
        headers: dict[str, str] = {}
        TraceContextTextMapPropagator().inject(headers, context=self.parent)
        return headers

    def adopt(self, carrier: Mapping[str, str]) -> None:
        """Parent this process's runs on the controller's session span."""
        self.parent = TraceContextTextMapPropagator().extract(dict(carrier))

    def end_session(self, attributes: Mapping[str, Any], failed: bool) -> None:
        if self.session is None:
            return
        self.session.set_attributes(self._clean(attributes))
        if failed:
            self.session.set_status(Status(StatusCode.ERROR, "the session failed"))
        self.session.end()
        self.session = None

    # -- runs ---------------------------------------------------------------------
    def start_run(self, name: str, attributes: Mapping[str, Any]) -> RunTrace:
        span = self.tracer.start_span(name, context=self.parent, kind=SpanKind.INTERNAL,
                                      attributes=self._clean(attributes))
        with self._lock:
            self._open[id(span)] = span
        return RunTrace(self, span)

    def _closed(self, span: Span) -> None:
        with self._lock:
            self._open.pop(id(span), None)

    # -- model calls ----------------------------------------------------------------
    def model_calls(self) -> Any:
        """litellm's OpenTelemetry integration, writing to this process's tracer (a litellm CustomLogger)."""
        if self._model_calls is None:
            self._model_calls = _model_call_logger(self.provider, self.settings.content, self.secrets)
        return self._model_calls

    # -- the end ----------------------------------------------------------------------
    def shutdown(self) -> None:
        """End what is still open (runs never judged: the session stopped), then send every span."""
        with self._lock:
            left = list(self._open.values())
            self._open.clear()
        for span in left:
            span.set_attribute("agentic.judged", False)
            span.end()
        self.provider.shutdown()  # flushes the batch processor: every span is sent (or its export failed)

    def _clean(self, attributes: Mapping[str, Any]) -> dict[str, Any]:
        """Attributes OpenTelemetry accepts (no None), with credential values masked."""
        out = {}
        for key, value in attributes.items():
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                value = [str(v) for v in value]
            out[key] = redact(value, self.secrets)
        return out


class RunTrace:
    """One run's span; its model and tool calls are its children."""

    def __init__(self, tracing: Tracing, span: Span) -> None:
        self.tracing = tracing
        self.span = span

    def metadata(self) -> dict[str, Any]:
        """What the run's litellm calls carry, so that litellm parents their spans on this run."""
        return {PARENT_KEY: self.span}

    def tool_call(self, log: ToolCallLog, began_ns: int, ended_ns: int) -> None:
        """A finished tool call as a child span (``run.agent.run_agent``'s ``on_tool_call``)."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": log["name"],
            "gen_ai.tool.call.id": log["id"], "gen_ai.tool.type": "function", "agentic.turn": log["turn"],
            "agentic.tool.ok": log["ok"], "agentic.tool.redundant": log["redundant"],
            "agentic.tool.hallucinated": log["hallucinated"],
        }
        if self.tracing.settings.content:
            attributes["gen_ai.tool.call.arguments"] = log["raw_arguments"][:MAX_CONTENT_CHARS]
            attributes["gen_ai.tool.call.result"] = log["result"][:MAX_CONTENT_CHARS]
        span = self.tracing.tracer.start_span(f"execute_tool {log['name']}", trace.set_span_in_context(self.span),
                                              kind=SpanKind.INTERNAL, start_time=began_ns,
                                              attributes=self.tracing._clean(attributes))
        if not log["ok"]:
            span.set_attribute("error.type", "hallucinated" if log["hallucinated"] else "tool_error")
            span.set_status(Status(StatusCode.ERROR))
        span.end(end_time=ended_ns)

    def judged(self, record: RunRecord) -> None:
        """The run's verdict on its span, which ends here."""
        attributes = {
            "agentic.verdict": "pass" if record["passed"] else "fail", "agentic.failure_mode": record["failure_mode"],
            "gen_ai.usage.input_tokens": record["prompt_tokens"], "gen_ai.usage.output_tokens": record["completion_tokens"],
            "agentic.cost_usd": record["cost_usd"], "agentic.turns": record["turns"],
            "agentic.tool_calls": record["tool_calls"], "agentic.stop_reason": record["stop_reason"],
            "agentic.judged": True,
        }
        self.span.set_attributes(self.tracing._clean(attributes))
        if record["failure_mode"] == "infra_error":
            self.span.set_attribute("error.type", "infra_error")
            self.span.set_status(Status(StatusCode.ERROR, "the model call failed (the endpoint's fault)"))
        self.span.end()
        self.tracing._closed(self.span)


def _model_call_logger(provider: TracerProvider, content: bool, secrets: list[str]) -> Any:
    """litellm's ``OpenTelemetry`` on ``provider``: content only when opted in, credential values masked,
    and ``gen_ai.operation.name`` set on every call (litellm sets it only with content)."""
    from litellm.integrations.opentelemetry import OpenTelemetry, OpenTelemetryConfig
    from litellm.integrations.opentelemetry_utils.gen_ai_semconv import OTELSemconvCategory

    class ModelCalls(OpenTelemetry):
        def set_attributes(self, span: Any, kwargs: Any, response_obj: Any) -> None:
            super().set_attributes(span, kwargs, response_obj)
            attributes = dict(getattr(span, "attributes", None) or {})
            if "gen_ai.operation.name" not in attributes:
                span.set_attribute("gen_ai.operation.name", "chat")
            for key, value in attributes.items():
                if isinstance(value, str) and secrets and redact(value, secrets) != value:
                    span.set_attribute(key, redact(value, secrets))

    config = OpenTelemetryConfig(capture_message_content="SPAN_ONLY" if content else "NO_CONTENT",
                                 semconv_stability_opt_in={OTELSemconvCategory.GEN_AI_LATEST_EXPERIMENTAL})
    quiet = logging.getLogger("LiteLLM")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "Proxy Server is not installed": true, and no concern of a campaign's
    try:
        return ModelCalls(config=config, tracer_provider=provider)
    finally:
        quiet.setLevel(level)
