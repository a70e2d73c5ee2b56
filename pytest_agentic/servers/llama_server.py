"""Run llama.cpp's HTTP server (from the xllamacpp wheel) as a process of its own.

xllamacpp has no command line: ``xllamacpp.Server(params)`` loads the model
and starts llama.cpp's C++ HTTP server inside the calling process. This module
is that process: ``servers.start()`` runs ``python -m pytest_agentic.servers.llama_server``
so the server can be killed, and its log kept, like any other server.

It serves until SIGTERM or SIGINT (or until its parent goes away), then shuts
the server down and exits 0. Setup errors exit 2 with a message on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from typing import Any


def _set_param(params: Any, dotted: str, value: Any) -> None:
    obj = params
    *path, last = dotted.split(".")
    for part in path:
        obj = getattr(obj, part)
    if not hasattr(obj, last):
        raise AttributeError(f"xllamacpp.CommonParams has no parameter {dotted!r}")
    setattr(obj, last, value)


def build_params(args: argparse.Namespace) -> Any:
    import xllamacpp

    p = xllamacpp.CommonParams()
    p.model.path = args.model
    p.hostnames = [args.host]
    p.port = args.port
    p.n_ctx = args.ctx_size
    p.n_parallel = args.parallel
    if args.threads > 0:
        p.cpuparams.n_threads = args.threads
        p.cpuparams_batch.n_threads = args.threads
    if args.alias:
        p.model_alias = {args.alias}
    p.use_jinja = True
    p.ui = False  # no web UI: this server is for the harness only
    p.verbosity = args.verbosity
    if args.chat_template_file:
        with open(args.chat_template_file, encoding="utf-8") as fh:
            p.chat_template = fh.read()
    elif args.chat_template:
        from . import chat_templates

        p.chat_template = getattr(chat_templates, args.chat_template)
    for key, value in json.loads(args.params_json).items():
        _set_param(p, key, value)
    return p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pytest_agentic.servers.llama_server")
    ap.add_argument("--model", required=True, help="path to a GGUF file")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--ctx-size", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=0, help="0: llama.cpp's default")
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--alias", default="")
    ap.add_argument("--chat-template", default="", help="name of a template in pytest_agentic.servers.chat_templates")
    ap.add_argument("--chat-template-file", default="")
    ap.add_argument("--params-json", default="{}", help="extra CommonParams attributes, dotted names")
    ap.add_argument("--verbosity", type=int, default=3)
    args = ap.parse_args(argv)

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    parent = os.getppid()

    try:
        params = build_params(args)
    except Exception as exc:  # bad parameter: say so in the log, exit 2
        print(f"llama_server: bad parameters: {exc}", file=sys.stderr, flush=True)
        return 2

    import xllamacpp

    t0 = time.monotonic()
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        print(f"llama_server: server failed to start: {exc}", file=sys.stderr, flush=True)
        return 2
    print(f"llama_server: listening on {server.listening_address} "
          f"(model loaded in {time.monotonic() - t0:.2f}s, pid {os.getpid()})", flush=True)

    while not stop.wait(0.5):
        if os.getppid() != parent:  # orphaned: whoever started us is gone
            print("llama_server: parent process exited, shutting down", flush=True)
            break
    del server
    print("llama_server: stopped", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
