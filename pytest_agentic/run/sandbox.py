"""The box every process that runs model-influenced code runs in: bubblewrap on Linux.

The tools (``run_tests``) and the checkers' probes run code the model wrote. In the box that
code sees the interpreter and the libraries the tool needs (read-only), the workspace (its only
writable path) and a private ``/tmp``; it has no network, its own PID, IPC and UTS namespaces, an
allow-listed environment and rlimits, and nothing it starts outlives the call. ``$HOME``, the
project checkout, the campaign folder and ``models.yaml`` are not in it.

Nor is any host path: the workspace is at :data:`WORKSPACE`, pytest's libraries at :data:`SITE`, an
interpreter installed outside the system folders at :data:`PYTHON`; bwrap reads its options from a
descriptor (its command line holds none), and the box has no ``/proc``, whose ``mountinfo`` would
name the host folder behind every bind mount.

:func:`configure` picks the box once per process (``--agentic-sandbox``); :func:`execute` runs one
command in it. Without a usable bubblewrap, the ``auto`` and ``bubblewrap`` choices fail closed
(:class:`SandboxUnavailable`); ``none`` runs unconfined, on purpose, and the artefacts say so.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypedDict

from .calls import turns

#: What ``--agentic-sandbox`` accepts: ``auto`` is bubblewrap when it works, else a stop.
SandboxChoice = Literal["auto", "bubblewrap", "none"]
CHOICES: tuple[SandboxChoice, ...] = ("auto", "bubblewrap", "none")
#: The box a process actually uses.
SandboxKind = Literal["bubblewrap", "none"]

#: The bwrap binary to use instead of the one on PATH (tests point it at a missing file).
BWRAP_ENV = "AGENTIC_BWRAP"
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), "
                "or pass --agentic-sandbox=none to run model-written code unconfined")

#: rlimits of a boxed process: CPU seconds are the call's timeout plus this margin.
CPU_MARGIN_S = 5
#: Address space of a boxed process (bytes): room for pytest and a model's test suite.
MEMORY_BYTES = 2 * 1024**3
#: Processes (and threads) in the box, set inside it with util-linux's prlimit (the kernel does not
#: apply it to root).
MAX_PROCESSES = 256
#: Largest file a boxed process may write (bytes); also bounds the captured output.
MAX_FILE_BYTES = 1024 * 1024
#: Seconds a killed process group is waited on before the call returns without it.
KILL_WAIT_S = 10.0
#: Size of the box's private /tmp (bytes).
TMP_BYTES = 64 * 1024**2

#: Where the workspace is in the box: the command's cwd, its only writable place.
WORKSPACE = "/workspace"
#: Where pytest and what it requires are in the box (the folder on ``PYTHONPATH``).
SITE = "/opt/agentic/site-packages"
#: Where an interpreter that lies outside the system folders (pyenv, a self-built one) is in the box.
PYTHON = "/opt/agentic/python"

#: Directories a stock Linux Python needs from the system, bound read-only when present.
_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
#: The environment a boxed process gets (nothing of the caller's, so no credential either).
_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "PYTHONUNBUFFERED": "1",
    # The checkout's editable pytest_agentic (and any other plugin) is never loaded by the boxed pytest.
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
}

#: What every artefact of a session run with ``--agentic-sandbox=none`` says (terminal, summary.md,
#: report.html, campaign.json's notes).
UNCONFINED_NOTE = ("sandbox: none (--agentic-sandbox=none): model-written code ran UNCONFINED, as the user who "
                   "started pytest, with their files, network and processes")


class SandboxUnavailable(RuntimeError):
    """No box can be made here; the message is one line naming what is missing and how to fix it."""


class SandboxInfo(TypedDict):
    """How model-written code was contained: written in campaign.json and in each run's record."""

    #: ``bubblewrap``, or ``none`` when the session ran it unconfined (``--agentic-sandbox=none``).
    kind: SandboxKind
    #: The bubblewrap version (``0.8.0``), or None when unconfined.
    version: str | None


@dataclass(frozen=True)
class Box:
    kind: SandboxKind
    version: str | None = None
    binary: str | None = None

    def info(self) -> SandboxInfo:
        return SandboxInfo(kind=self.kind, version=self.version)


@dataclass(frozen=True)
class Completed:
    """What a boxed command left: its output (bounded by the caller), exit status, whether it timed out."""

    returncode: int | None
    timed_out: bool


def _bwrap_binary() -> str | None:
    configured = os.environ.get(BWRAP_ENV)
    if configured is not None:
        return configured if os.access(configured, os.X_OK) and Path(configured).is_file() else None
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=None)
def _probe(binary: str | None) -> Box | str:
    """The working bubblewrap box, or why there is none (probed once per process and binary)."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux with bubblewrap, and this is {sys.platform}"
    if binary is None:
        where = os.environ.get(BWRAP_ENV)
        return f"bubblewrap (bwrap) was not found{f' at {where} ({BWRAP_ENV})' if where else ' on PATH'}"
    try:
        version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout.split()
        trial = subprocess.run([binary, *_namespaces(), "--ro-bind", "/", "/", "--", "/bin/true"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap at {binary} does not run ({exc})"
    if trial.returncode != 0:
        why = (trial.stderr.strip().splitlines() or ["no message"])[-1][:200]
        return f"bubblewrap at {binary} cannot make a box here (user namespaces off?): {why}"
    return Box("bubblewrap", version[-1] if version else None, binary)


def available() -> Box | str:
    """The bubblewrap box of this machine, or one line saying why there is none."""
    return _probe(_bwrap_binary())


def select(choice: SandboxChoice) -> Box:
    """The box for ``choice``; :class:`SandboxUnavailable` when bubblewrap is asked for (or auto) and missing."""
    if choice == "none":
        return Box("none")
    found = available()
    if isinstance(found, str):
        raise SandboxUnavailable(f"model-written code must run in a sandbox, but {found}: {INSTALL_HINT}")
    return found


_chosen: SandboxChoice = "auto"


def configure(choice: SandboxChoice) -> None:
    """Set this process's choice (the session does, from ``--agentic-sandbox``); probed on first use."""
    global _chosen
    if choice not in CHOICES:
        raise ValueError(f"sandbox {choice!r}: expected one of {', '.join(CHOICES)}")
    _chosen = choice


def chosen() -> SandboxChoice:
    return _chosen


def current() -> Box:
    """The box this process runs model code in; fails closed when it cannot be made."""
    return select(_chosen)


def _namespaces() -> list[str]:
    return [
        # New user, PID, network, IPC, UTS and cgroup namespaces: no network (only a loopback of its
        # own), no view of or signal to the host's processes, no shared memory with them.
        "--unshare-all",
        # If the harness dies, the box dies with it (PR_SET_PDEATHSIG on the box's init).
        "--die-with-parent",
        # A new session: the code cannot push keystrokes into the terminal the harness runs in (TIOCSTI).
        "--new-session",
    ]


def _system(path: str) -> bool:
    return path.startswith(tuple(d + "/" for d in _SYSTEM_DIRS))


@dataclass(frozen=True)
class _Interpreter:
    """The running interpreter as the box has it: its executable's path there, the mounts that make it
    and pytest's libraries visible (read-only; each an option and its arguments) and the environment
    they need."""

    exe: str
    mounts: tuple[tuple[str, ...], ...]
    env: tuple[tuple[str, str], ...] = ()


@functools.lru_cache(maxsize=None)
def _interpreter() -> _Interpreter:
    """The real executable, its shared library and the standard library, then an empty site-packages
    at :data:`SITE` holding only the distributions pytest needs, one bind each; so the checkout's
    editable install, other packages and their ``.pth`` files are not there. An interpreter under the
    system folders keeps its own paths (they name no user, checkout or venv); one elsewhere (pyenv
    under ``$HOME``) has its prefix at :data:`PYTHON`, its own site-packages made empty.
    """
    mounts: list[tuple[str, ...]] = []
    env: list[tuple[str, str]] = []
    exe = os.path.realpath(sys.executable)
    base_paths = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    prefix = os.path.realpath(sys.base_prefix)
    moved = not _system(exe)

    def inside(path: str) -> str:
        if moved and (path == prefix or path.startswith(prefix + "/")):
            return PYTHON + path[len(prefix):]
        return path

    if moved:
        mounts.append(("--ro-bind", prefix, PYTHON))
        box_exe = inside(exe) if inside(exe) != exe else f"{PYTHON}/bin/{os.path.basename(exe)}"
        if box_exe != inside(exe):
            mounts.append(("--ro-bind", exe, box_exe))
        if sysconfig.get_config_var("Py_ENABLE_SHARED"):  # libpython, if its rpath is the host's prefix
            env.append(("LD_LIBRARY_PATH", f"{PYTHON}/lib"))
    else:
        box_exe = exe
    libdir, soname = sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir and soname and Path(libdir, soname).exists():
        lib = os.path.realpath(Path(libdir, soname))
        if not _system(lib) and inside(lib) == lib:
            mounts.append(("--ro-bind", lib, f"{PYTHON}/lib/{os.path.basename(lib)}" if moved else lib))
    stdlib = {os.path.realpath(base_paths[k]) for k in ("stdlib", "platstdlib")}
    mounts += [("--ro-bind", p, inside(p)) for p in sorted(stdlib) if not _system(p) and inside(p) == p]
    site = site_packages()
    # The base interpreter's own site-packages (inside the standard library's folder, in a venv or
    # pyenv) is made empty, so its packages and .pth files are not there.
    base = {os.path.realpath(base_paths[k]) for k in ("purelib", "platlib")} - {site}
    for path in sorted(p for p in base if os.path.isdir(p)):
        mounts += [("--size", str(TMP_BYTES), "--tmpfs", inside(path)), ("--remount-ro", inside(path))]
    # An empty, read-only site-packages at SITE, then pytest and what it requires, one bind each.
    mounts.append(("--size", str(TMP_BYTES), "--tmpfs", SITE))
    mounts += [("--ro-bind", entry, f"{SITE}/{os.path.basename(entry)}") for entry in _pytest_entries(site)]
    mounts.append(("--remount-ro", SITE))
    return _Interpreter(box_exe, tuple(mounts), tuple(env))


def site_packages() -> str:
    """The site-packages folder that holds pytest (the venv's in a venv)."""
    import pytest

    return os.path.realpath(Path(pytest.__file__).parent.parent)


def _pytest_entries(site: str) -> list[str]:
    """The files and folders of site-packages that pytest and its requirements install (markers applied)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    seen: set[str] = set()
    entries: set[str] = set()
    todo = ["pytest"]
    while todo:
        name = todo.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        for f in dist.files or ():
            top = Path(os.path.realpath(str(dist.locate_file(f.parts[0]))))
            if str(top.parent) == site and top.name != "__pycache__" and not top.name.endswith(".pth"):
                entries.add(str(top))
        for text in dist.requires or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return sorted(e for e in entries if os.path.exists(e))


def _system_binds() -> list[str]:
    args: list[str] = []
    for d in _SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]  # merged /usr: /bin -> usr/bin
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    return args


def inside(path: str, cwd: Path) -> str:
    """``path`` as the box sees it: the workspace ``cwd`` and what lies in it under :data:`WORKSPACE`."""
    root = str(cwd)
    if path == root or path.startswith(root.rstrip("/") + "/"):
        return WORKSPACE + path[len(root.rstrip("/")):] if path != root else WORKSPACE
    return path


def host_path(path: str, cwd: Path) -> str:
    """A path the box reported (a code object's file) as it is here: under :data:`WORKSPACE`, in ``cwd``."""
    if path == WORKSPACE or path.startswith(WORKSPACE + "/"):
        return str(cwd) + path[len(WORKSPACE):]
    return path


def bwrap_argv(box: Box, argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 60.0) -> list[str]:
    """The bwrap command line that runs ``argv`` in ``cwd`` (the only writable path, at
    :data:`WORKSPACE` in the box) with ``env``; ``argv[0]`` may be ``sys.executable``, and a path in
    ``cwd`` is given as the box sees it."""
    assert box.binary is not None
    python = _interpreter()
    if argv and os.path.realpath(argv[0]) == os.path.realpath(sys.executable):
        argv = [python.exe, *argv[1:]]
    argv = [inside(a, cwd) for a in argv]
    args = [box.binary, *_namespaces()]
    # The system's programs and shared libraries, read-only; nothing else of / (no /etc, /home, /root, /srv).
    args += _system_binds()
    # No /proc: its mountinfo would name the host folder behind every bind (the workspace's, the venv's),
    # whatever the mount point. A minimal /dev (null, zero, random, tty), a private /tmp.
    args += ["--dev", "/dev", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for mount in python.mounts:
        args += mount
    # The workspace at WORKSPACE, the one writable place, and the cwd.
    args += ["--bind", str(cwd), WORKSPACE, "--chdir", WORKSPACE]
    # The box's own root is a tmpfs holding the mount points: read-only, so nothing is written beside them.
    args += ["--remount-ro", "/"]
    # The environment is exactly ``env``: the caller's (keys, tokens, PATH entries) is dropped.
    args += ["--clearenv"]
    for key, value in sorted({**env, **dict(python.env)}.items()):
        args += ["--setenv", key, value]
    # No capabilities inside, even as the box's root.
    args += ["--cap-drop", "ALL"]
    # The rlimits are set inside the box (util-linux's prlimit, then exec): there the kernel counts the
    # box's processes only (on bwrap it would count every process of the user), and no preexec_fn runs
    # in the harness's threads. Without prlimit, execute() sets them on bwrap instead.
    return [*args, "--", *_prlimit(timeout), *argv]


def _rlimits(timeout: float) -> dict[str, int]:
    """The limits of a boxed process, each at most the harness's own hard limit (which cannot be raised)."""
    wanted = {"CPU": int(timeout) + CPU_MARGIN_S, "AS": MEMORY_BYTES, "FSIZE": MAX_FILE_BYTES, "CORE": 0,
              "NPROC": MAX_PROCESSES}
    out = {}
    for name, value in wanted.items():
        hard = resource.getrlimit(getattr(resource, f"RLIMIT_{name}"))[1]
        out[name] = value if hard == resource.RLIM_INFINITY else min(value, hard)
    return out


def _prlimit(timeout: float) -> list[str]:
    found = shutil.which("prlimit", path="/usr/bin:/bin")
    if not found:
        return []
    return [found, *(f"--{name.lower()}={value}" for name, value in _rlimits(timeout).items()), "--"]


def _limits(timeout: float) -> None:  # pragma: no cover - runs in the child (unconfined, or no prlimit)
    for name, value in _rlimits(timeout).items():
        if name == "NPROC":
            continue  # would count every process of the user, not the command's
        resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (value, value))


def environment(*, pytest_path: bool) -> dict[str, str]:
    """The allow-listed environment of the box; ``pytest_path`` puts pytest's site-packages (at :data:`SITE`
    in the box) on ``PYTHONPATH``."""
    env = dict(_BASE_ENV)
    if pytest_path:
        env["PYTHONPATH"] = SITE
    return env


def execute(argv: list[str], cwd: Path, *, timeout: float, stdout: int, stderr: int,
            stdin: bytes | None = None, pytest_path: bool = False, box: Box | None = None) -> Completed:
    """Run ``argv`` (``argv[0]`` may be ``sys.executable``) in the box, in ``cwd``, with a timeout.

    ``stdout``/``stderr`` are file descriptors (bounded by the file-size rlimit). The whole process
    group is killed on return, so nothing outlives the call even when unconfined.
    """
    box = box or current()
    env = environment(pytest_path=pytest_path)
    limits: functools.partial[None] | None = functools.partial(_limits, timeout)
    with tempfile.TemporaryFile() as feed, tempfile.TemporaryFile() as options:
        if box.kind == "bubblewrap":
            full = bwrap_argv(box, argv, cwd, env, timeout)
            # bwrap reads its options from a descriptor: its command line (the box's init's, in the box)
            # holds no host path. The command after ``--`` holds none either (bwrap_argv).
            split = full.index("--")
            options.write(b"\0".join(a.encode() for a in full[1:split]) + b"\0")
            options.seek(0)
            command, run_in = [full[0], "--args", str(options.fileno()), *full[split:]], Path("/")
            fds: tuple[int, ...] = (options.fileno(),)
            if _prlimit(timeout):
                limits = None  # set inside the box
        else:
            env["HOME"] = env["TMPDIR"] = tempfile.gettempdir()
            if pytest_path:
                env["PYTHONPATH"] = site_packages()
            command, run_in, fds = argv, cwd, ()
        if stdin is not None:
            feed.write(stdin)
            feed.seek(0)
        proc = subprocess.Popen(command, cwd=run_in, stdin=feed if stdin is not None else subprocess.DEVNULL,
                                stdout=stdout, stderr=stderr, env=env, start_new_session=True,
                                preexec_fn=limits, pass_fds=fds)
        try:
            with turns.waiting():  # the run's turn goes to another run while the process works
                return Completed(proc.wait(timeout=timeout), False)
        except subprocess.TimeoutExpired:
            return Completed(None, True)
        finally:
            _kill_group(proc)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=KILL_WAIT_S)
    except subprocess.TimeoutExpired:  # unkillable for now (a process stuck in the kernel): not waited on
        pass
