"""Local model servers that the plugin starts and stops itself.

A models.yaml entry may carry a ``server:`` mapping; the controller calls
``preflight()`` for every selected entry before any run, ``start()`` once per
session, hands ``RunningServer.api_base`` to litellm (``openai/<name>`` with
``api_base=...``), and calls ``RunningServer.stop()`` at the end.

Two kinds:

``kind: llama.cpp``
    The embedded CPU default: llama.cpp's own HTTP server from the
    ``xllamacpp`` wheel, run as ``python -m pytest_agentic.servers.llama_server``.
    Keys: ``gguf`` (built-in model name or GGUF path, required), ``ctx_size``
    (4096, the context of each slot), ``threads`` (default: all CPUs but one, 1 to 8;
    0: llama.cpp's own choice), ``parallel`` (slots, each a run in flight; default:
    as many as the session sends at once, see ``servers.config.slots_for``),
    ``chat_template`` (name of a template in ``chat_templates``, or ``model``
    for the GGUF's own; the built-in SmolLM2 defaults to ``SMOLLM2_TOOLS``),
    ``chat_template_file`` (a jinja file), ``params`` (extra
    ``xllamacpp.CommonParams`` attributes, dotted names).

``kind: vllm``
    ``vllm serve MODEL --host 127.0.0.1 --port P --enable-auto-tool-choice
    --tool-call-parser PARSER [...]``. Keys: ``model`` and
    ``tool_call_parser`` (required), ``serve_args`` (list of extra
    arguments), ``chat_template_kwargs`` (mapping, passed as
    ``--default-chat-template-kwargs JSON``, e.g. ``{enable_thinking:
    false}``), ``reasoning_parser``, ``chat_template``,
    ``served_model_name``, ``executable`` (default ``vllm``),
    ``require_gpu`` (default true).

Keys of both: ``health_timeout_s`` (llama.cpp 120, vllm 900), ``port``
(default: a free one), ``env`` (extra environment variables).

Every server runs in a process group of its own under
``pytest_agentic.servers._supervise``, which takes the group down if its parent dies.
``stop()`` kills the group; an atexit hook and a SIGTERM/SIGHUP hook (installed
only where the default handler is in place) stop whatever is still running.
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import (  # noqa: F401  (preflight and ServerStartError are this module's API)
    DEFAULT_HEALTH_TIMEOUT_S,
    HOST,
    ServerStartError,
    free_port,
    llama_argv,
    preflight,
    vllm_argv,
)

BIND_ERRORS = ("couldn't bind", "address already in use", "errno 98")
CHILD_PYTHONPATH_VAR = "PYTEST_AGENTIC_CHILD_PYTHONPATH"


# ---------------------------------------------------------------- running


@dataclass
class RunningServer:
    api_base: str
    pid: int
    log_path: Path
    entry_name: str = ""
    kind: str = ""
    _proc: subprocess.Popen | None = field(default=None, repr=False, compare=False)
    _stopped: bool = field(default=False, repr=False, compare=False)

    def alive(self) -> bool:
        """True while the server process runs (it may still be loading)."""
        if self._stopped:
            return False
        if self._proc is not None:
            return self._proc.poll() is None
        return _pid_running(self.pid)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server and everything in its process group. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        try:
            _kill_group(self.pid, self._proc, timeout)
        finally:
            _LIVE.pop(self.pid, None)


def _answers(kill: Any, ident: int) -> bool:
    """Whether a process (``os.kill``) or process group (``os.killpg``) still exists."""
    try:
        kill(ident, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_running(pid: int) -> bool:
    return _answers(os.kill, pid)


def _group_exists(pgid: int) -> bool:
    return _answers(os.killpg, pgid)


def _kill_group(pgid: int, proc: subprocess.Popen | None, timeout: float) -> None:
    """SIGTERM the group, wait up to timeout, SIGKILL what is left; reap the leader."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + max(timeout, 0.0)
    while time.monotonic() < deadline:
        if proc is not None:
            proc.poll()  # reap the leader so that it does not linger as a zombie
        if not _group_exists(pgid):
            break
        time.sleep(0.05)
    else:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if proc is not None:
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILLed above
            pass
    # Members that ignored SIGTERM while the leader exited: no mercy.
    deadline = time.monotonic() + 5
    while _group_exists(pgid) and time.monotonic() < deadline:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            break
        time.sleep(0.05)


_LIVE: dict[int, RunningServer] = {}
_hooks_lock = threading.Lock()
_hooks_installed = False


def stop_all(timeout: float = 10.0) -> None:
    """Stop every server this process started and has not stopped yet."""
    for server in list(_LIVE.values()):
        try:
            server.stop(timeout)
        except Exception:  # pragma: no cover - best effort at exit
            pass


def _on_signal(signum: int, frame: Any) -> None:  # pragma: no cover - exercised via subprocess tests
    stop_all(timeout=5.0)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_hooks() -> None:
    global _hooks_installed
    with _hooks_lock:
        if _hooks_installed:
            return
        _hooks_installed = True
        atexit.register(stop_all)
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGHUP):
                if signal.getsignal(sig) is signal.SIG_DFL:
                    signal.signal(sig, _on_signal)


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    tail = text.splitlines()[-lines:]
    return "\n".join("    " + line for line in tail)


def _http_ok(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


class _Crashed(Exception):
    def __init__(self, returncode: int):
        self.returncode = returncode


def _wait_healthy(proc: subprocess.Popen, root: str, timeout: float) -> bool:
    """Poll GET /health, then GET /v1/models, until both answer 200.

    Returns False on timeout; raises _Crashed if the process exits first.
    """
    deadline = time.monotonic() + timeout
    while True:
        rc = proc.poll()
        if rc is not None:
            raise _Crashed(rc)
        if _http_ok(root + "/health") and _http_ok(root + "/v1/models"):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)


def start(entry_name: str, server_cfg: Mapping[str, Any], log_path: Path) -> RunningServer:
    """Start the server for one models.yaml entry and wait until it is healthy.

    The server's stdout and stderr go to ``log_path`` (appended). Raises
    ServerStartError naming the entry, what failed and the log path.
    """
    preflight(entry_name, server_cfg)
    kind = server_cfg["kind"]
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    timeout = float(server_cfg.get("health_timeout_s", DEFAULT_HEALTH_TIMEOUT_S[kind]))
    env = dict(os.environ)
    env.update({k: str(v) for k, v in server_cfg.get("env", {}).items()})
    env.setdefault("PYTHONUNBUFFERED", "1")
    # The supervisor and the llama.cpp launcher are modules of this package:
    # make sure their interpreter imports the same copy of it. vLLM gets the
    # PYTHONPATH it would have had (the supervisor puts it back).
    pkg_root = str(Path(__file__).resolve().parent.parent)
    original = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([pkg_root, *filter(None, [original])])
    if kind == "vllm":
        env[CHILD_PYTHONPATH_VAR] = original if original is not None else ""
    _install_hooks()

    fixed_port = server_cfg.get("port")
    attempts = 1 if fixed_port is not None else 3
    for attempt in range(1, attempts + 1):
        port = fixed_port if fixed_port is not None else free_port()
        argv = (llama_argv if kind == "llama.cpp" else vllm_argv)(entry_name, server_cfg, port)
        root = f"http://{HOST}:{port}"
        with open(log_path, "ab") as log:
            log.write(f"=== pytest-agentic: starting {kind} server for {entry_name!r} on "
                      f"{root}\n=== {' '.join(argv)}\n".encode())
            log.flush()
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "pytest_agentic.servers._supervise", *argv],
                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                    env=env, process_group=0, close_fds=True,
                )
            except OSError as exc:
                raise ServerStartError(f"model {entry_name!r}: cannot start {kind} server: {exc} "
                                       f"(log: {log_path})") from None
        server = RunningServer(api_base=root + "/v1", pid=proc.pid, log_path=log_path,
                               entry_name=entry_name, kind=kind, _proc=proc)
        _LIVE[proc.pid] = server
        t0 = time.monotonic()
        try:
            healthy = _wait_healthy(proc, root, timeout)
        except _Crashed as crash:
            server.stop(timeout=2)
            tail = _log_tail(log_path)
            if attempt < attempts and any(m in tail.lower() for m in BIND_ERRORS):
                continue  # lost a race for the free port: try another one
            raise ServerStartError(
                f"model {entry_name!r}: {kind} server exited with status {crash.returncode} "
                f"before it became healthy (port {port}); log: {log_path}\n{tail}") from None
        except BaseException:  # Ctrl-C while waiting: leave nothing behind
            server.stop(timeout=2)
            raise
        if not healthy:
            server.stop(timeout=5)
            raise ServerStartError(
                f"model {entry_name!r}: {kind} server did not answer GET /health and "
                f"/v1/models on {root} within health_timeout_s={timeout:g}s; log: {log_path}\n"
                f"{_log_tail(log_path)}")
        with open(log_path, "ab") as log:
            log.write(f"=== pytest-agentic: healthy after {time.monotonic() - t0:.2f}s\n".encode())
        return server
    raise AssertionError("unreachable")  # pragma: no cover
