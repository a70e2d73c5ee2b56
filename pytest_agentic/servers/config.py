"""Configuration of local model servers: key validation, preflight checks, command lines.

See ``pytest_agentic.servers.lifecycle`` for the keys of each kind; this module checks a
``server:`` mapping and builds the command that runs it. Nothing here starts
a process except ``nvidia-smi -L`` (GPU check) and, for a built-in GGUF, the
download of the model file when the command line is built.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..run.models import SERVER_KINDS
from . import gguf as _gguf

HOST = "127.0.0.1"
KINDS = SERVER_KINDS
DEFAULT_HEALTH_TIMEOUT_S = {"llama.cpp": 120.0, "vllm": 900.0}
# Key -> accepted types. bool is an int in Python: checked apart.
_COMMON_KEYS: dict[str, tuple[type, ...]] = {
    "kind": (str,),
    "health_timeout_s": (int, float),
    "port": (int,),
    "env": (dict,),
}
_KEYS: dict[str, dict[str, tuple[type, ...]]] = {
    "llama.cpp": {
        **_COMMON_KEYS,
        "gguf": (str,),
        "ctx_size": (int,),
        "threads": (int,),
        "parallel": (int,),
        "chat_template": (str,),
        "chat_template_file": (str,),
        "params": (dict,),
        "verbosity": (int,),
    },
    "vllm": {
        **_COMMON_KEYS,
        "model": (str,),
        "tool_call_parser": (str,),
        "serve_args": (list,),
        "chat_template_kwargs": (dict,),
        "reasoning_parser": (str,),
        "chat_template": (str,),
        "served_model_name": (str,),
        "executable": (str,),
        "require_gpu": (bool,),
    },
}
_REQUIRED = {"llama.cpp": ("gguf",), "vllm": ("model", "tool_call_parser")}
# The built-in model files and the chat template each is served with.
_BUILTIN_TEMPLATES = {"smollm2-135m-q4_1": "SMOLLM2_TOOLS"}


class ServerStartError(Exception):
    """A model server could not be checked, started or made healthy.

    The message names the models.yaml entry, what failed and, once a process
    was started, the log file.
    """


# ---------------------------------------------------------------- checks


def _kind(entry_name: str, cfg: Mapping[str, Any]) -> str:
    if not isinstance(cfg, Mapping):
        raise ValueError(f"model {entry_name!r}: 'server' must be a mapping, got {type(cfg).__name__}")
    kind = cfg.get("kind")
    if kind not in KINDS:
        raise ValueError(f"model {entry_name!r}: server key 'kind' must be one of "
                         f"{', '.join(KINDS)}, got {kind!r}")
    return kind


def _validate(entry_name: str, cfg: Mapping[str, Any]) -> str:
    kind = _kind(entry_name, cfg)
    allowed = _KEYS[kind]
    for key, value in cfg.items():
        if key not in allowed:
            raise ValueError(f"model {entry_name!r}: unknown server key {key!r} for kind "
                             f"{kind!r} (known: {', '.join(sorted(allowed))})")
        types = allowed[key]
        ok = isinstance(value, types) and (bool in types or not isinstance(value, bool))
        if not ok:
            want = " or ".join(t.__name__ for t in types)
            raise ValueError(f"model {entry_name!r}: server key {key!r} must be {want}, "
                             f"got {value!r}")
    for key in _REQUIRED[kind]:
        if key not in cfg:
            raise ValueError(f"model {entry_name!r}: server key {key!r} is required for kind {kind!r}")
    if "health_timeout_s" in cfg and cfg["health_timeout_s"] <= 0:
        raise ValueError(f"model {entry_name!r}: server key 'health_timeout_s' must be > 0")
    if "port" in cfg and not 1 <= cfg["port"] <= 65535:
        raise ValueError(f"model {entry_name!r}: server key 'port' must be in 1..65535")
    for key in ("ctx_size", "parallel"):
        if key in cfg and cfg[key] < 1:
            raise ValueError(f"model {entry_name!r}: server key {key!r} must be >= 1")
    if "threads" in cfg and cfg["threads"] < 0:
        raise ValueError(f"model {entry_name!r}: server key 'threads' must be >= 0")
    if "serve_args" in cfg and not all(isinstance(a, (str, int, float)) for a in cfg["serve_args"]):
        raise ValueError(f"model {entry_name!r}: server key 'serve_args' must be a list of strings")
    if "env" in cfg and not all(isinstance(k, str) and isinstance(v, (str, int, float))
                                for k, v in cfg["env"].items()):
        raise ValueError(f"model {entry_name!r}: server key 'env' must map names to strings")
    return kind


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _check_port(entry_name: str, cfg: Mapping[str, Any]) -> None:
    port = cfg.get("port")
    if port is not None and not _port_free(port):
        raise ServerStartError(f"model {entry_name!r}: port {port} on {HOST} is already in use "
                               f"(server key 'port'; leave it out to use a free port)")


def _vllm_executable(entry_name: str, cfg: Mapping[str, Any]) -> str:
    exe = cfg.get("executable", "vllm")
    found = shutil.which(exe)
    if found is None:
        raise ServerStartError(
            f"model {entry_name!r}: vLLM executable {exe!r} not found on PATH "
            f"(install vllm in this environment, or set server key 'executable')")
    return found


def _gpu_problem() -> str | None:
    """Why no NVIDIA GPU is usable here, or None if one is."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and cvd.strip() in ("", "-1"):
        return f"CUDA_VISIBLE_DEVICES={cvd!r} hides every GPU"
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "nvidia-smi not found (no NVIDIA driver)"
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"nvidia-smi -L failed: {exc}"
    if out.returncode != 0 or "GPU" not in out.stdout:
        msg = (out.stderr or out.stdout).strip().splitlines()
        return "nvidia-smi -L lists no GPU" + (f" ({msg[0]})" if msg else "")
    return None


def preflight(entry_name: str, server_cfg: Mapping[str, Any]) -> None:
    """Cheap checks before any run: config keys, binary present, GPU for vLLM, port.

    Raises ValueError (bad configuration, naming the key) or ServerStartError.
    Downloads nothing.
    """
    kind = _validate(entry_name, server_cfg)
    if kind == "llama.cpp":
        import importlib.util

        if importlib.util.find_spec("xllamacpp") is None:
            raise ServerStartError(f"model {entry_name!r}: the llama.cpp server needs the "
                                   f"'xllamacpp' package (pip install xllamacpp)")
        try:
            _gguf.check_spec(server_cfg["gguf"])
        except ValueError as exc:
            raise ValueError(f"model {entry_name!r}: server key {exc}") from None
        tfile = server_cfg.get("chat_template_file")
        if tfile is not None and not Path(tfile).expanduser().is_file():
            raise ValueError(f"model {entry_name!r}: server key 'chat_template_file': "
                             f"no such file {tfile!r}")
        tname = server_cfg.get("chat_template")
        if tname is not None and tname != "model":
            from . import chat_templates

            if not isinstance(getattr(chat_templates, tname, None), str):
                raise ValueError(f"model {entry_name!r}: server key 'chat_template': unknown "
                                 f"template {tname!r} (use 'model' or a name in "
                                 f"pytest_agentic.servers.chat_templates)")
    else:
        _vllm_executable(entry_name, server_cfg)
        if server_cfg.get("require_gpu", True):
            problem = _gpu_problem()
            if problem:
                raise ServerStartError(f"model {entry_name!r}: vLLM needs a GPU: {problem} "
                                       f"(server key 'require_gpu: false' skips this check)")
    _check_port(entry_name, server_cfg)


# ---------------------------------------------------------------- command lines


def default_threads() -> int:
    """llama.cpp threads when the entry does not say: every CPU we may use but one, 1 to 8.

    The one left over is for pytest, its xdist workers and the commands the
    agent runs. Measured on 2 CPUs with other work running: 2 threads gave
    65 tokens/s of generation when the CPUs were free and 1 to 30 when they
    were not (the threads wait on each other); 1 thread gave a steady 40.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus - 1))


def with_slots(cfg: Mapping[str, Any], in_flight: int) -> dict[str, Any]:
    """A llama.cpp server gets a slot for each run the session may send it at once.

    ``in_flight`` is what the session sends (``--agentic-concurrency`` times the xdist workers,
    capped by the entry's ``max_concurrency``); an explicit ``parallel`` key wins. Each slot
    has ``ctx_size`` tokens of context, so memory grows with the slots.
    """
    out = dict(cfg)
    if out.get("kind") == "llama.cpp" and "parallel" not in out:
        out["parallel"] = max(1, in_flight)
    return out


def llama_argv(entry_name: str, cfg: Mapping[str, Any], port: int) -> list[str]:
    try:
        model_path = _gguf.resolve(cfg["gguf"])
    except _gguf.GGUFError as exc:
        raise ServerStartError(f"model {entry_name!r}: cannot obtain model file: {exc}") from None
    argv = [
        sys.executable, "-m", "pytest_agentic.servers.llama_server",
        "--model", str(model_path), "--host", HOST, "--port", str(port),
        # llama.cpp splits its context among the slots: each slot gets ctx_size.
        "--ctx-size", str(cfg.get("ctx_size", 4096) * cfg.get("parallel", 1)),
        "--threads", str(cfg.get("threads", default_threads())),
        "--parallel", str(cfg.get("parallel", 1)),
        "--alias", entry_name,
        "--verbosity", str(cfg.get("verbosity", 3)),
        "--params-json", json.dumps(cfg.get("params", {})),
    ]
    if "chat_template_file" in cfg:
        argv += ["--chat-template-file", str(Path(cfg["chat_template_file"]).expanduser())]
    else:
        name = cfg.get("chat_template", _BUILTIN_TEMPLATES.get(cfg["gguf"], "model"))
        if name != "model":
            argv += ["--chat-template", name]
    return argv


def vllm_argv(entry_name: str, cfg: Mapping[str, Any], port: int) -> list[str]:
    argv = [
        _vllm_executable(entry_name, cfg), "serve", cfg["model"],
        "--host", HOST, "--port", str(port),
        "--enable-auto-tool-choice", "--tool-call-parser", cfg["tool_call_parser"],
    ]
    if "reasoning_parser" in cfg:
        argv += ["--reasoning-parser", cfg["reasoning_parser"]]
    if "chat_template" in cfg:
        argv += ["--chat-template", cfg["chat_template"]]
    if "chat_template_kwargs" in cfg:
        argv += ["--default-chat-template-kwargs", json.dumps(cfg["chat_template_kwargs"])]
    if "served_model_name" in cfg:
        argv += ["--served-model-name", cfg["served_model_name"]]
    argv += [str(a) for a in cfg.get("serve_args", [])]
    return argv
