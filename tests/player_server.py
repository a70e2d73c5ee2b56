"""A model played by a person or an agent, over the real HTTP path.

The harness's checkers are proven by players who write the model's side of a run by hand, without
reading any checker: careful, terse, small-model style, realistic mistakes, reward hacks. This module
is their endpoint: an OpenAI-compatible server that writes each request to a folder and answers it
with the reply the player leaves there, so every run goes through litellm, the agent loop, the tools
and the checker exactly as a hosted model's would.

    python -m tests.player_server serve --dir D --port 8931 &
    pytest -m task_10 --models-file=D/models.yaml --model player --agentic-seed 41 --runs 1 \
        --agentic-concurrency 1 --agentic-out=D/results
    python -m tests.player_server next --dir D          # waits for the next request, shows what is new
    python -m tests.player_server reply --dir D --call fs_read '{"path": "queries.log"}'
    python -m tests.player_server reply --dir D --text-file answer.md

`serve` also writes D/models.yaml with the `player` entry pointing at itself.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

WAIT_S = 3600.0


def _req(folder: Path, n: int) -> Path:
    return folder / f"req-{n:04d}.json"


def _resp(folder: Path, n: int) -> Path:
    return folder / f"resp-{n:04d}.json"


def completion(reply: dict[str, Any], model: str, n: int) -> dict[str, Any]:
    """An OpenAI chat completion carrying the player's reply: text, tool calls, or both."""
    calls = [{"id": f"call_{n}_{i}", "type": "function",
              "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
             for i, c in enumerate(reply.get("tool_calls", []))]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content")}
    if calls:
        message["tool_calls"] = calls
    text = (reply.get("content") or "") + json.dumps(reply.get("tool_calls", []))
    return {"id": f"chatcmpl-player-{n}", "object": "chat.completion", "created": int(time.time()),
            "model": model, "choices": [{"index": 0, "message": message,
                                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": max(1, len(text) // 4),
                      "total_tokens": max(1, len(text) // 4)}}


class _Handler(BaseHTTPRequestHandler):
    server: "PlayerServer"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, code: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "player", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
        n = self.server.take_number()
        folder = self.server.folder
        tmp = folder / f".req-{n:04d}.tmp"
        tmp.write_text(json.dumps(body, indent=1))
        tmp.replace(_req(folder, n))
        deadline = time.monotonic() + self.server.wait_s
        while time.monotonic() < deadline:
            path = _resp(folder, n)
            if path.exists():
                self._send(200, completion(json.loads(path.read_text()), body.get("model", "player"), n))
                return
            time.sleep(0.2)
        self._send(504, {"error": {"message": f"no reply to request {n} in {self.server.wait_s:.0f} s"}})


class PlayerServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, folder: Path, port: int, wait_s: float = WAIT_S) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.folder, self.wait_s = folder, wait_s
        self._lock = threading.Lock()
        self._next = 1 + max((int(p.stem[4:]) for p in folder.glob("req-*.json")), default=0)

    def take_number(self) -> int:
        with self._lock:
            n, self._next = self._next, self._next + 1
            return n


def models_yaml(port: int) -> str:
    return ("default: [player]\nmodels:\n  player:\n    model: openai/player\n"
            f"    api_base: http://127.0.0.1:{port}/v1\n    description: played by hand through tests/player_server.py\n"
            "    params: {temperature: 0.0, max_tokens: 4096}\n"
            "    price: {input_per_token: 0.0, output_per_token: 0.0}\n"
            "    limits: {max_seconds: 3600, request_timeout_s: 3700, max_retries: 0, max_turns: 40}\n")


def pending(folder: Path) -> list[int]:
    return sorted(int(p.stem[4:]) for p in folder.glob("req-*.json") if not _resp(folder, int(p.stem[4:])).exists())


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def show(folder: Path, n: int, whole: bool = False) -> str:
    """What is new in request ``n``: the whole conversation at its start, else what followed the
    player's last reply (tool results)."""
    body = json.loads(_req(folder, n).read_text())
    messages = body.get("messages", [])
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    new = messages if whole or last < 0 else messages[last + 1:]
    out = [f"=== request {n} (turn {sum(m.get('role') == 'assistant' for m in messages) + 1}"
           f"{', a NEW run' if last < 0 else ''}) ==="]
    if last < 0:
        tools = [t["function"]["name"] + json.dumps(t["function"].get("parameters", {}).get("properties", {}))
                 for t in body.get("tools", [])]
        out.append("tools offered: " + ("\n  " + "\n  ".join(tools) if tools else "none"))
    for m in new:
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            calls = [f"{c['function']['name']}({c['function']['arguments']})" for c in m["tool_calls"]]
            out.append(f"--- assistant (tool calls): {'; '.join(calls)}\n{_content(m)}")
        else:
            out.append(f"--- {role}{' [' + str(m.get('name') or m.get('tool_call_id')) + ']' if role == 'tool' else ''}:\n"
                       f"{_content(m)}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.player_server", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--dir", type=Path, required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--wait", type=float, default=WAIT_S, help="seconds a request waits for its reply")
    nx = sub.add_parser("next", help="wait for the oldest request without a reply and show what is new")
    nx.add_argument("--dir", type=Path, required=True)
    nx.add_argument("--wait", type=float, default=300.0)
    nx.add_argument("--whole", action="store_true", help="show the whole conversation")
    r = sub.add_parser("reply", help="answer the oldest pending request (or --n)")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--n", type=int)
    r.add_argument("--text")
    r.add_argument("--text-file", type=Path)
    r.add_argument("--call", nargs=2, action="append", default=[], metavar=("TOOL", "ARGS_JSON"))
    a = p.parse_args(argv)
    folder: Path = a.dir
    folder.mkdir(parents=True, exist_ok=True)
    if a.cmd == "serve":
        (folder / "models.yaml").write_text(models_yaml(a.port))
        server = PlayerServer(folder, a.port, a.wait)
        print(f"player endpoint on http://127.0.0.1:{a.port}/v1, requests in {folder}", flush=True)
        server.serve_forever()
        return 0
    if a.cmd == "next":
        deadline = time.monotonic() + a.wait
        while not pending(folder):
            if time.monotonic() > deadline:
                print("no pending request (is the campaign still running?)")
                return 1
            time.sleep(0.3)
        print(show(folder, pending(folder)[0], a.whole))
        return 0
    waiting = pending(folder)
    n = a.n if a.n is not None else (waiting[0] if waiting else None)
    if n is None or not _req(folder, n).exists() or _resp(folder, n).exists():
        print(f"no pending request {n if n is not None else ''} to answer", file=sys.stderr)
        return 2
    text = a.text_file.read_text() if a.text_file else a.text
    calls = [{"name": name, "arguments": json.loads(args)} for name, args in a.call]
    if text is None and not calls:
        print("give --text, --text-file or --call", file=sys.stderr)
        return 2
    tmp = folder / f".resp-{n:04d}.tmp"
    tmp.write_text(json.dumps({"content": text, "tool_calls": calls}))
    os.replace(tmp, _resp(folder, n))
    print(f"answered request {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
