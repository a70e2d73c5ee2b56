"""Whether a session exports OpenTelemetry traces, read from the standard variables and the options.

Nothing here imports OpenTelemetry: with no variable set and no option given, no module of it is
imported in the whole session (``tests/test_telemetry.py`` checks ``sys.modules``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

#: The variables that name the collector; either one turns tracing on (the first is for traces alone).
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
#: The variables that name the protocol, read in this order (the SDK's default: http/protobuf).
PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
#: The protocols the exporter speaks (grpc needs opentelemetry-exporter-otlp-proto-grpc).
PROTOCOLS = ("http/protobuf", "grpc")
#: OpenTelemetry's GenAI opt-in for prompts and completions in spans (prompts can hold secrets).
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CONTENT_ON = ("true", "1", "span_only", "span_and_event")


class TelemetryError(ValueError):
    """A tracing setting that cannot be used; the message names the variable or option."""


@dataclass(frozen=True)
class TraceSettings:
    #: ``http/protobuf`` or ``grpc``.
    protocol: str
    #: Prompts, completions, tool arguments and results go into spans (opted in).
    content: bool
    #: What turned tracing on: a variable's name or the option.
    why: str

    def as_dict(self) -> dict[str, object]:
        """What a worker needs to trace as the controller does (rides in ``workerinput``)."""
        return {"protocol": self.protocol, "content": self.content, "why": self.why}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> TraceSettings:
        return cls(protocol=str(data["protocol"]), content=bool(data["content"]), why=str(data["why"]))


def trace_settings(option: bool, content_option: bool,
                   environ: Mapping[str, str] = os.environ) -> TraceSettings | None:
    """The session's tracing, or None when it is off: no endpoint variable and no ``--agentic-otel``, or
    OpenTelemetry switched off by its own variables (``OTEL_SDK_DISABLED=true``, ``OTEL_TRACES_EXPORTER=none``)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if environ.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return None
    why = next((name for name in ENDPOINT_VARIABLES if environ.get(name, "").strip()), None)
    if why is None and not option:
        return None
    protocol, named = "http/protobuf", None
    for name in PROTOCOL_VARIABLES:
        if environ.get(name, "").strip():
            protocol, named = environ[name].strip(), name
            break
    if protocol not in PROTOCOLS:
        raise TelemetryError(f"{named}={protocol!r}: pytest-agentic exports traces over "
                             f"{' or '.join(PROTOCOLS)}")
    content = content_option or environ.get(CONTENT_VARIABLE, "").strip().lower() in _CONTENT_ON
    return TraceSettings(protocol=protocol, content=content, why=why or "--agentic-otel")
