"""An OTLP/HTTP trace receiver on 127.0.0.1 (tests only): what a collector would get, decoded.

It answers ``POST /v1/traces`` (``application/x-protobuf``) as an OpenTelemetry collector does and
decodes each body with opentelemetry-proto's ``ExportTraceServiceRequest``: every span it received,
with its resource's attributes, as a plain dict.
"""

from __future__ import annotations

import threading
from typing import Any

from .fault_server import LocalEndpoint, QuietHandler


def _value(any_value: Any) -> Any:
    """An OTLP ``AnyValue`` as Python."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    return getattr(any_value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


class OtlpReceiver(LocalEndpoint):
    """Collects the spans POSTed to ``/v1/traces``; ``endpoint`` is what OTEL_EXPORTER_OTLP_ENDPOINT takes."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []
        self.requests = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:
                from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                    ExportTraceServiceRequest,
                    ExportTraceServiceResponse,
                )

                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.path != "/v1/traces" or self.headers.get("content-type") != "application/x-protobuf":
                    self.send_response(404)
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.add(request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.serve(Handler)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def add(self, request: Any) -> None:
        found = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    found.append({
                        "name": span.name, "trace_id": span.trace_id.hex(), "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex() or None, "kind": span.kind,
                        "attributes": _attributes(span.attributes), "resource": resource,
                        "scope": scope_spans.scope.name, "status": span.status.code,
                        "start": span.start_time_unix_nano, "end": span.end_time_unix_nano,
                    })
        with self.lock:
            self.requests += 1
            self.spans.extend(found)

