"""A local OpenAI-compatible endpoint that plays task solutions and injects faults (tests only)."""

from __future__ import annotations

import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from pytest_agentic.run.scripted import _step_message
from pytest_agentic.run.task import Solution

FAULTS = ("429", "500", "503", "timeout", "drop")
#: Servers whose refusals a ``FaultServer(like=...)`` plays.
SERVERS = ("llama.cpp", "vllm", "openai")


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """The conversation's size in tokens, as the stand-in counts them (about four characters a token)."""
    return len(json.dumps(messages)) // 4


def unreadable_arguments(messages: list[dict[str, Any]]) -> str | None:
    """Why a history's tool call arguments do not parse as JSON (what llama.cpp refuses), or None."""
    for message in messages:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        for call in calls or []:
            try:
                json.loads((call.get("function") or {}).get("arguments"))
            except (TypeError, ValueError) as exc:
                return str(exc)
    return None


def context_refusal(like: str, window: int, used: int) -> tuple[int, dict[str, Any]]:
    """The status and body with which ``like`` refuses a request of ``used`` tokens over a ``window``."""
    if like == "llama.cpp":
        return 400, {"error": {"code": 400, "message": f"request ({used} tokens) exceeds the available context "
                               f"size ({window} tokens), try increasing it", "type": "exceed_context_size_error",
                               "n_prompt_tokens": used, "n_ctx": window}}
    if like == "vllm":
        return 400, {"object": "error", "message": f"This model's maximum context length is {window} tokens. However, "
                     f"you requested {used + 16} tokens ({used} in the messages, 16 in the completion). Please reduce "
                     "the length of the messages or completion.", "type": "BadRequestError", "param": None, "code": 400}
    return 400, {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input "
                           "and try again.", "type": "invalid_request_error", "param": "input",
                           "code": "context_length_exceeded"}}


def arguments_refusal(reason: str) -> tuple[int, dict[str, Any]]:
    """llama.cpp's answer to a history holding tool call arguments that are not JSON."""
    return 500, {"error": {"code": 500, "message": f"Failed to parse tool call arguments as JSON: {reason}",
                           "type": "server_error"}}


class _Server(ThreadingHTTPServer):
    request_queue_size = 512  # a hundred runs may connect at once
    daemon_threads = True


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps connections alive and logs nothing to the test's output."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass


class LocalEndpoint:
    """An HTTP server on a free port of 127.0.0.1, served from a daemon thread inside ``with``."""

    def serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class FaultServer(LocalEndpoint):
    """Serves /v1/chat/completions on 127.0.0.1; a share of the calls fail.

    ``solutions`` maps a task prompt to the solution played for it; ``fault_rate``
    is the share of calls answered with a fault (seeded, so a plain session sees
    the same sequence every time); ``stall_s`` is how long a 'timeout' fault waits;
    ``latency_s`` is how long every answer takes. ``peak`` counts the most calls in flight at once.
    ``quota``: a provider's limit on calls in flight; a call beyond it is answered at once with
    429 and ``Retry-After: retry_after`` (counted in ``rate_refused``, not in ``calls`` or ``peak``).

    ``like`` (one of ``SERVERS``) makes it refuse requests as that server does: llama.cpp answers
    500 to a history holding tool call arguments that are not JSON; with a ``context_window``
    (tokens, counted by ``prompt_tokens``) each refuses a longer conversation in its own words.
    A script step whose arguments do not parse ends with ``finish_reason: length``, as a call
    cut by the token limit does. ``refused`` counts the refusals by kind.
    """

    def __init__(self, solutions: dict[str, Solution], fault_rate: float = 0.0, seed: int = 0,
                 stall_s: float = 2.0, echo_auth: bool = False, kinds: tuple[str, ...] = FAULTS,
                 latency_s: float = 0.0, like: str | None = None, context_window: int | None = None,
                 quota: int | None = None, retry_after: str = "1") -> None:
        assert like in (None, *SERVERS), like
        self.solutions = solutions
        self.fault_rate = fault_rate
        self.rng = random.Random(seed)
        self.stall_s = stall_s
        self.echo_auth = echo_auth
        self.kinds = kinds
        self.lock = threading.Lock()
        self.calls = 0
        self.faults: dict[str, int] = {}
        self.latency_s = latency_s
        self.in_flight = 0
        self.peak = 0
        #: Calls received, counted on arrival (``calls`` counts them once answered).
        self.arrived = 0
        self.like = like
        self.context_window = context_window
        self.refused: dict[str, int] = {}
        self.quota = quota
        self.retry_after = retry_after
        #: Calls refused with 429 because ``quota`` calls were in flight.
        self.rate_refused = 0
        self.serve(self._handler())

    def refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """How the server played refuses this request, or None."""
        if self.like is None:
            return None
        messages = body.get("messages") or []
        reason = unreadable_arguments(messages)
        kind, answer = None, None
        if reason is not None and self.like == "llama.cpp":
            kind, answer = "arguments", arguments_refusal(reason)
        elif self.context_window is not None and prompt_tokens(messages) > self.context_window:
            kind, answer = "context", context_refusal(self.like, self.context_window, prompt_tokens(messages))
        if kind is not None:
            with self.lock:
                self.refused[kind] = self.refused.get(kind, 0) + 1
        return answer

    def _pick_fault(self) -> str | None:
        with self.lock:
            self.calls += 1
            if self.rng.random() < self.fault_rate:
                fault = self.rng.choice(self.kinds)
                self.faults[fault] = self.faults.get(fault, 0) + 1
                return fault
        return None

    def reply(self, body: dict[str, Any], auth: str) -> dict[str, Any]:
        messages = body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        script = self.solutions.get(prompt, [])
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn < len(script):
            message, finish = _step_message(script[turn], turn)
            if unreadable_arguments([message]) is not None:
                finish = "length"
        else:
            message, finish = {"role": "assistant", "content": ""}, "stop"
        if self.echo_auth and message.get("content") is not None:
            message["content"] = f"{message['content']} (you sent: {auth})"
        return {"id": f"cmpl-{turn}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model", "x"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.arrived += 1
                    over = server.quota is not None and server.in_flight >= server.quota
                    server.rate_refused += over
                    if not over:
                        server.in_flight += 1
                        server.peak = max(server.peak, server.in_flight)
                if over:
                    return self._send(429, {"error": {"message": "too many calls in flight", "type": "rate_limit"}},
                                      {"Retry-After": server.retry_after})
                try:
                    time.sleep(server.latency_s)
                    return self._answer(body)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _answer(self, body: dict[str, Any]) -> None:
                refusal = server.refusal(body)
                if refusal is not None:
                    return self._send(*refusal)
                fault = server._pick_fault()
                if fault == "timeout":
                    time.sleep(server.stall_s)
                    return self._send(504, {"error": {"message": "stalled"}})
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                if fault in ("400", "401", "429", "500", "503"):
                    return self._send(int(fault), {"error": {"message": f"injected {fault}", "type": "server_error"}})
                return self._send(200, server.reply(body, self.headers.get("Authorization", "")))

        return Handler
