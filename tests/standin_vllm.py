"""A stand-in for ``vllm serve``, for testing the server lifecycle without vLLM or a GPU.

It takes the command line that servers.start() gives vLLM::

    standin_vllm.py serve MODEL --host H --port P --enable-auto-tool-choice
        --tool-call-parser NAME [--default-chat-template-kwargs JSON]
        [--reasoning-parser NAME] [--served-model-name NAME] [...]

and answers ``GET /health``, ``GET /v1/models`` and ``POST /v1/chat/completions``
(OpenAI shape; with tools offered it calls the first one). Behaviour for tests,
through environment variables:

- ``STANDIN_ARGS_FILE``: write the parsed command line there as JSON;
- ``STANDIN_LOAD_DELAY_S``: sleep this long before listening (a model load);
- ``STANDIN_CRASH``: print an error and exit 3 instead of serving;
- ``STANDIN_NEVER_HEALTHY``: listen, but answer /health with 503 forever;
- ``STANDIN_EXIT_AFTER``: die (exit 1) right after answering this many chat completions;
- ``STANDIN_SPAWN_CHILD``: start a grandchild that ignores SIGTERM and write
  its pid to this file (a worker process that must not outlive the server).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def parse(argv):
    ap = argparse.ArgumentParser(prog="standin-vllm")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("model")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.add_argument("--enable-auto-tool-choice", action="store_true")
    s.add_argument("--tool-call-parser")
    s.add_argument("--reasoning-parser")
    s.add_argument("--chat-template")
    s.add_argument("--default-chat-template-kwargs", type=json.loads)
    s.add_argument("--served-model-name")
    args, extra = ap.parse_known_args(argv)
    if args.enable_auto_tool_choice and not args.tool_call_parser:
        ap.error("--enable-auto-tool-choice requires --tool-call-parser")
    return args, extra


def make_handler(args):
    name = args.served_model_name or args.model
    never_healthy = bool(os.environ.get("STANDIN_NEVER_HEALTHY"))
    exit_after = int(os.environ.get("STANDIN_EXIT_AFTER", "0"))
    answered = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            sys.stderr.write("standin-vllm: " + (fmt % a) + "\n")

        def _send(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health":
                if never_healthy:
                    self._send(503, {"status": "loading"})
                else:
                    self._send(200, {})
            elif self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": name, "object": "model", "owned_by": "standin-vllm"}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(length) or b"{}")
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": "not found"})
                return
            if req.get("model") != name:
                self._send(404, {"error": {"message": f"model {req.get('model')!r} does not exist",
                                           "type": "NotFoundError", "code": 404}})
                return
            tools = req.get("tools") or []
            if tools and args.enable_auto_tool_choice:
                fn = tools[0]["function"]["name"]
                message = {"role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_standin_1", "type": "function",
                    "function": {"name": fn, "arguments": "{}"}}]}
                finish = "tool_calls"
            else:
                last = req.get("messages", [{}])[-1].get("content")
                message = {"role": "assistant", "content": f"echo: {last}"}
                finish = "stop"
            self._send(200, {
                "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
                "model": name,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            })
            answered[0] += 1
            if exit_after and answered[0] >= exit_after:
                print("standin-vllm: exiting as asked (STANDIN_EXIT_AFTER)", flush=True)
                self.wfile.flush()
                os._exit(1)

    return Handler


def main(argv=None) -> int:
    args, extra = parse(sys.argv[1:] if argv is None else argv)
    print(f"standin-vllm: serve {args.model} on {args.host}:{args.port} (pid {os.getpid()})", flush=True)
    if os.environ.get("STANDIN_ARGS_FILE"):
        with open(os.environ["STANDIN_ARGS_FILE"], "w") as fh:
            seen = {k: os.environ.get(k) for k in
                    ("PYTHONPATH", "STANDIN_MARK", "PYTEST_AGENTIC_CHILD_PYTHONPATH")}
            json.dump({**vars(args), "extra": extra, "env": seen}, fh)
    if os.environ.get("STANDIN_CRASH"):
        print("standin-vllm: RuntimeError: CUDA out of memory (simulated)", flush=True)
        return 3
    child_file = os.environ.get("STANDIN_SPAWN_CHILD")
    if child_file:
        child = subprocess.Popen([sys.executable, "-c",
                                  "import signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
        with open(child_file, "w") as fh:
            fh.write(str(child.pid))
    time.sleep(float(os.environ.get("STANDIN_LOAD_DELAY_S", "0")))
    httpd = ThreadingHTTPServer((args.host, args.port), make_handler(args))
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        httpd.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        print("standin-vllm: shutting down", flush=True)
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
