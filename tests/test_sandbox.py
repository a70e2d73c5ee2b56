"""The sandbox (run/sandbox.py) and the probe protocol (run/probe.py), and how a session fails closed."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import pytest

from pytest_agentic.run import probe, sandbox
from pytest_agentic.run.tools import Workspace, run_bounded

from .helpers import ROOT, campaign_dir, runs

MODELS = "default: oracle\nmodels:\n  oracle: {model: agentic-scripted/oracle}\n"


def _box() -> sandbox.Box:
    found = sandbox.available()
    assert isinstance(found, sandbox.Box), found
    return found


def test_the_box_binds_no_home_no_checkout_and_only_pytest_of_site_packages(tmp_path):
    argv = sandbox.bwrap_argv(_box(), [sys.executable, "-V"], tmp_path, sandbox.environment(pytest_path=True))
    sources = [argv[i + 1] for i, a in enumerate(argv) if a in ("--ro-bind", "--bind") and i + 2 < len(argv)]
    points = [argv[i + 2] for i, a in enumerate(argv) if a in ("--ro-bind", "--bind") and i + 2 < len(argv)]
    home = str(Path.home())
    # $HOME shows only through the interpreter's own folders (pyenv keeps it under $HOME); the
    # checkout only through a venv that lies inside it (CI's .ci-venv), never its own files.
    prefix = os.path.realpath(sys.prefix)
    assert not [m for m in sources if m == home or (m.startswith(str(ROOT)) and not m.startswith(prefix))]
    assert [m for m in sources if m.startswith("/etc")] == []
    # Where they are in the box names none of them: the workspace, the venv, home, the checkout.
    for host in (str(tmp_path), prefix, os.path.realpath(sandbox.site_packages()), home, str(ROOT)):
        assert not [a for a in argv[argv.index("--"):] + points if host in a], host
    names = {Path(m).name for m in points if Path(m).parent == Path(sandbox.SITE)}
    assert {"pytest", "_pytest", "pluggy"} <= names
    assert not [n for n in names if n.startswith(("pytest_agentic", "litellm", "__editable__")) or n.endswith(".pth")]
    assert ["--bind", str(tmp_path), sandbox.WORKSPACE] == argv[argv.index("--bind"):argv.index("--bind") + 3]
    assert "--proc" not in argv  # /proc/*/mountinfo would name every bind's host folder
    for flag in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv"):
        assert flag in argv


def test_code_in_the_box_sees_only_the_allow_listed_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTIC_SANDBOX_TEST_TOKEN", "host-secret")
    ws = Workspace(tmp_path)
    # The checkout's files: none is there (a venv inside the checkout, as CI's, shows only its own folders).
    own = [str(ROOT / name) for name in ("README.md", "models.yaml", "pyproject.toml", "pytest_agentic", "tasks")]
    ws.populate({"show.py": f"import os\nprint(sorted(os.environ))\nprint([os.path.exists(p) for p in {own!r}])\n"})
    out = run_bounded(ws, [sys.executable, "show.py"], 30.0)
    assert "AGENTIC_SANDBOX_TEST_TOKEN" not in out
    assert "[False, False, False, False, False]" in out and out.endswith("[exit code 0]"), out


def test_the_workspace_and_a_private_tmp_are_the_only_writable_places(tmp_path):
    private = f"/tmp/agentic-private-{uuid.uuid4().hex}"
    beside = tmp_path / "beside.txt"  # under /tmp too: in the box it lands in the private /tmp
    ws = Workspace(tmp_path / "ws")
    ws.populate({"w.py": f"import os, sys\nfor p in ('made.txt', {private!r}, {str(beside)!r}):\n"
                         "    os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)\n"
                         "    open(p, 'w').write('x')\n"
                         "for p in ('/made', '/usr/made', sys.prefix + '/made'):\n"
                         "    try:\n        open(p, 'w')\n        print('WROTE', p)\n"
                         "    except OSError as exc:\n        print('refused', exc.errno)\n"})
    out = run_bounded(ws, [sys.executable, "w.py"], 30.0)
    assert out.count("refused") == 3 and "WROTE" not in out and out.endswith("[exit code 0]"), out
    assert (ws.root / "made.txt").is_file() and not beside.exists() and not Path(private).exists()


def test_the_box_sets_its_rlimits(tmp_path):
    ws = Workspace(tmp_path)
    ws.populate({"limits.py": "import resource as r\nprint([r.getrlimit(getattr(r, 'RLIMIT_' + n))[0] "
                              "for n in ('CPU', 'AS', 'FSIZE', 'NPROC', 'CORE')])\n"})
    out = run_bounded(ws, [sys.executable, "limits.py"], 30.0)
    assert f"[35, {sandbox.MEMORY_BYTES}, {sandbox.MAX_FILE_BYTES}, {sandbox.MAX_PROCESSES}, 0]" in out, out


def test_a_time_out_kills_the_box(tmp_path):
    ws = Workspace(tmp_path)
    ws.populate({"spin.py": "while True:\n    pass\n"})
    assert run_bounded(ws, [sys.executable, "spin.py"], 1.0).endswith("[timed out after 1s and was stopped]")


@pytest.fixture
def probe_ws(tmp_path):
    def make(code: str) -> Path:
        (tmp_path / "mod.py").write_text(code)
        return tmp_path
    return make


def test_probe_brings_back_exact_types(probe_ws):
    root = probe_ws("def f(x):\n    return x\n\n\ndef t():\n    return (1, 'a')\n")
    values = [1, True, 1.5, "s", None, [1, [2]], {"k": [1]}, 2**70]
    got = probe.call_all(root, [("mod", "f", [v]) for v in values] + [("mod", "t", [])])
    values.append((1, "a"))
    assert [o.value for o in got] == values
    assert [type(o.value) for o in got] == [type(v) for v in values]


def test_an_object_that_equals_everything_comes_back_opaque(probe_ws):
    root = probe_ws("class Yes:\n    def __eq__(self, o):\n        return True\n\n\ndef f():\n    return Yes()\n"
                    "\n\nclass Int(int):\n    def __eq__(self, o):\n        return True\n\n\ndef g():\n    return Int(3)\n")
    got = probe.call_all(root, [("mod", "f", []), ("mod", "g", [])])
    assert all(isinstance(o.value, probe.Opaque) for o in got)
    assert got[0].value != 42 and got[1].value != 3 and got[0].value != got[0].value.type_name


@pytest.mark.parametrize("code, message", [
    ("import os\nos._exit(0)\n", "no result"),
    (f"print({probe.FRAME!r} + '[]')\n\ndef f():\n    return 1\n", "2 result frames"),
    (f"import os\nos.write(1, {(chr(10) + probe.FRAME + '[]' + chr(10)).encode()!r})\nos._exit(0)\n", "0 results"),
    ("import atexit, os\natexit.register(os._exit, 0)\nimport time\ntime.sleep(60)\n", "timed out"),
])
def test_a_missing_or_forged_result_is_a_rejection(probe_ws, code, message):
    root = probe_ws(code + "\n\ndef f():\n    return 1\n")
    with pytest.raises(AssertionError, match=message):
        probe.call_all(root, [("mod", "f", [])], timeout=5.0)


@pytest.mark.parametrize("code, reason", [
    ("def f(x):\n    return x + 1\n", None),
    ("def _h(x):\n    return x + 1\n\n\ndef f(x):\n    return _h(x)\n", None),  # a helper it calls
    ("def f(x):\n    return x\n\n\nfrom other import f\n", "defined in other.py, not in mod.py"),
    ("def f(x):\n    return x\n\n\nf = lambda x: x + 1\n", "starts at line 5 of mod.py, which holds no definition"),
    ("import functools\n\n\ndef f(x):\n    return x + 1\n\n\nf = functools.lru_cache(f)\n", "is a "),
    ("import other\n\n\ndef f(x):\n    return x\n\n\nf.__code__ = other.f.__code__.replace(co_filename=__file__, "
     "co_firstlineno=4)\n", "does not run the code of its definition in mod.py (line 4)"),
    ("import other\n\n\ndef f(x):\n    return x\n\n\nf = type(f)(f.__code__, {'x': 1})\n", "globals other than"),
    ("raise ImportError('no')\n\n\ndef f(x):\n    return x\n", None),  # nothing was called: no origin
])
def test_foreign_tells_whether_the_function_called_is_the_one_its_file_defines(probe_ws, code, reason):
    root = probe_ws(code)
    (root / "other.py").write_text("def f(x):\n    return x + 1\n")
    got = probe.call_all(root, [("mod", "f", [1]), ("mod", "f", [2])], origin=True)
    why = probe.foreign(root, "mod.py", "f", got)
    assert why is None if reason is None else reason in why, why
    assert probe.call_all(root, [("mod", "f", [1])])[0].origin is None  # asked only with origin=True


@pytest.mark.parametrize("traced", [False, True])
def test_a_one_pass_argument_is_an_iterator_in_the_box(probe_ws, traced):
    """probe.OnePass(rows) reaches the function as ``iter(rows)``, bound before the model's code is imported
    (a module that replaces ``builtins.iter`` changes nothing), traced or not; a function that iterates its
    argument twice sees it empty the second time."""
    root = probe_ws("import builtins\nbuiltins.iter = lambda x: list(x)\n\n\n"
                    "def f(xs):\n    return [type(xs).__name__, sum(xs), [x for x in xs]]\n")
    calls = [("mod", "f", [probe.OnePass([1, 2])]), ("mod", "f", [[1, 2]]), ("mod", "f", [probe.OnePass(())])]
    got = (lambda c: [t.outcome for t in probe.trace_all(root, c)]) if traced else (lambda c: probe.call_all(root, c))
    assert [o.value for o in got(calls)] == [["list_iterator", 3, []], ["list", 3, [1, 2]], ["list_iterator", 0, []]]


def test_a_one_pass_argument_holds_a_list_or_tuple(probe_ws):
    with pytest.raises(TypeError, match="a one-pass argument holds a list or tuple, not generator"):
        probe.call_all(probe_ws("def f(x):\n    return x\n"), [("mod", "f", [probe.OnePass(x for x in "ab")])])


def test_raised_and_missing_are_told_apart(probe_ws):
    root = probe_ws("def f():\n    raise ValueError('no')\n")
    raised, missing = probe.call_all(root, [("mod", "f", []), ("mod", "nope", [])])
    assert (raised.kind, raised.error, missing.kind) == ("raised", "ValueError: no", "missing")


def test_probe_input_carries_no_expected_value(monkeypatch, probe_ws):
    seen = {}

    def spy(argv, cwd, **kw):
        seen.update(argv=argv, stdin=kw["stdin"])
        raise RuntimeError("stop")

    monkeypatch.setattr(sandbox, "execute", spy)
    with pytest.raises(RuntimeError):
        probe.call_all(probe_ws("def f(x):\n    return x\n"), [("mod", "f", [123456789])])
    assert json.loads(seen["stdin"])["calls"] == [["mod", "f", "[123456789]", []]]
    assert seen["argv"][1:3] == ["-I", "-S"]


def test_selecting_without_bubblewrap_fails_closed(monkeypatch, tmp_path):
    monkeypatch.setenv(sandbox.BWRAP_ENV, str(tmp_path / "missing-bwrap"))
    with pytest.raises(sandbox.SandboxUnavailable, match="bubblewrap .* not found .*apt-get install bubblewrap"):
        sandbox.select("auto")
    assert sandbox.select("none").info() == {"kind": "none", "version": None}


@pytest.fixture
def code_task_project(pytester):
    pytester.makefile(".yaml", models=MODELS)
    stem = "test_task_01_fix_failing_test"
    pytester.makepyfile(**{"test_t01": f'''import importlib.util, sys
_spec = importlib.util.spec_from_file_location("_real_t01", {str(ROOT / "tasks" / f"{stem}.py")!r})
real = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = real
_spec.loader.exec_module(real)
test_fix_failing_test = real.test_fix_failing_test
''', "test_t03": "from pytest_agentic import Final, TaskInstance, task\n\n\n"
                 "def build(seed):\n    return TaskInstance(prompt='Say ok.', files={}, tools=('fs_list',), "
                 "reference=[Final('ok')])\n\n\n@task('say_ok', 'say_ok', build=build)\n"
                 "def test_say_ok(agent):\n    assert agent.run().final_answer == 'ok'\n"})
    return pytester


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_no_bubblewrap_stops_a_code_task_session_with_one_line(code_task_project, monkeypatch, xdist):
    monkeypatch.setenv(sandbox.BWRAP_ENV, "/nonexistent/bwrap")
    result = code_task_project.runpytest_subprocess("-p", "no:randomly", "--runs", "1", "--agentic-out", "out", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + "\n" + result.stderr.str()
    lines = [ln for ln in text.splitlines() if "model-written code must run in a sandbox" in ln]
    assert len(lines) == 1 and lines[0].startswith("ERROR: task_01: ") and "apt-get install bubblewrap" in lines[0]
    assert not (code_task_project.path / "out").exists()
    # A session of tasks that run no model code needs no sandbox.
    plain = code_task_project.runpytest_subprocess("-p", "no:randomly", "--runs", "1", "-k", "say_ok",
                                                   "--agentic-out", "out2", *xdist)
    assert plain.ret == 0


def test_unconfined_on_purpose_says_so_in_every_artefact(code_task_project, monkeypatch):
    monkeypatch.setenv(sandbox.BWRAP_ENV, "/nonexistent/bwrap")
    code_task_project.makeini("[pytest]\nagentic_sandbox = none\n")
    result = code_task_project.runpytest_subprocess("-p", "no:randomly", "--runs", "1", "--agentic-out", "out")
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert "model-written code ran UNCONFINED" in result.stdout.str()
    folder = campaign_dir(code_task_project.path / "out")
    manifest = json.loads((folder / "campaign.json").read_text())
    assert manifest["sandbox"] == {"choice": "none", "kind": "none", "version": None}
    assert any("UNCONFINED" in n for n in manifest["notes"])
    for name in ("summary.md", "report.html"):
        assert "model-written code ran UNCONFINED" in (folder / name).read_text(), name
    by_task = {r["task"]: r["sandbox"] for r in runs(folder)}
    assert by_task == {"task_01": {"kind": "none", "version": None}, "say_ok": None}


def test_the_record_names_the_box_and_its_version(code_task_project):
    result = code_task_project.runpytest_subprocess("-p", "no:randomly", "--runs", "1", "--agentic-out", "out")
    assert result.ret == 0, result.stdout.str()[-2000:]
    folder = campaign_dir(code_task_project.path / "out")
    box = _box()
    assert json.loads((folder / "campaign.json").read_text())["sandbox"] == {
        "choice": "auto", "kind": "bubblewrap", "version": box.version}
    assert {r["task"]: r["sandbox"] for r in runs(folder)}["task_01"] == {"kind": "bubblewrap",
                                                                           "version": box.version}
    assert "UNCONFINED" not in (folder / "summary.md").read_text()


def test_a_bad_ini_value_is_named(pytester):
    pytester.makeini("[pytest]\nagentic_sandbox = docker\n")
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess()
    assert "ini option agentic_sandbox: expected one of auto, bubblewrap, none, got 'docker'" in result.stderr.str()
    assert os.environ.get(sandbox.BWRAP_ENV) is None


def test_trace_brings_back_the_places_each_call_executes(probe_ws):
    """trace_all: the instructions of each call, down to the column (two kinds on one line are told apart),
    in the module and in code compiled from a string; a branch not taken is not among them."""
    root = probe_ws("exec(compile('def h(x):\\n    return x * 2\\n', '<string>', 'exec'))\n\n\n"
                    "def f(k):\n    return (k + 1) if k else (h(k) - 1)\n")
    one, zero = probe.trace_all(root, [("mod", "f", [1]), ("mod", "f", [0])])
    assert (one.outcome.value, zero.outcome.value) == (2, -1)
    assert {(s.filename.rsplit("/", 1)[-1], s.qualname) for s in zero.sites} == {("mod.py", "f"), ("<string>", "h")}
    assert {s.qualname for s in one.sites} == {"f"}
    columns = lambda t: {s.column for s in t.sites if s.qualname == "f" and s.line == 5}  # noqa: E731
    assert columns(one) - columns(zero) and columns(zero) - columns(one)


@pytest.mark.parametrize("code, cut", [
    ("import sys\n\n\ndef f(k):\n    sys.settrace(None)\n    return k\n", "replaced the tracer"),
    ("def f(k):\n    return sum(eval(f'lambda: {i}')() for i in range(5000))\n", "more than"),
])
def test_a_trace_the_code_escapes_or_floods_is_cut_off(probe_ws, code, cut):
    (traced,) = probe.trace_all(probe_ws(code), [("mod", "f", [1])])
    assert traced.sites is None and cut in traced.cut
