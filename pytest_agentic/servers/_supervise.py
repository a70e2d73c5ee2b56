"""``python -m pytest_agentic.servers._supervise CMD [ARG...]``: run CMD, and never outlive our parent.

servers.start() runs every model server under this small supervisor, which is
the leader of the server's process group. It exits with CMD's exit status when
CMD exits. If the process that started it goes away without stopping it
(pytest killed with SIGKILL, a crashed controller), it notices that it has
been re-parented and takes the whole process group down: SIGTERM, then SIGKILL
after a grace period. That covers what atexit and signal handlers in the
parent cannot.

A polling loop rather than PR_SET_PDEATHSIG: the latter fires when the
*thread* that forked exits, which would kill a server started from a worker
thread that has since finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

POLL_S = 0.5
CHILD_PYTHONPATH_VAR = "PYTEST_AGENTIC_CHILD_PYTHONPATH"  # same name as in servers.py
GRACE_S = 10.0


def _take_group_down(child: subprocess.Popen) -> None:
    try:
        os.killpg(os.getpgrp(), signal.SIGTERM)  # also reaches us: ignored below
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.1)
    os.killpg(os.getpgrp(), signal.SIGKILL)  # ends us as well


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m pytest_agentic.servers._supervise CMD [ARG...]", file=sys.stderr)
        return 2
    parent = os.getppid()
    # A stop() sends SIGTERM to the whole group: the child gets it directly and
    # we wait for it to exit, so that its exit status is ours.
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    env = dict(os.environ)
    if CHILD_PYTHONPATH_VAR in env:  # the PYTHONPATH the server itself should see
        child_path = env.pop(CHILD_PYTHONPATH_VAR)
        if child_path:
            env["PYTHONPATH"] = child_path
        else:
            env.pop("PYTHONPATH", None)
    try:
        child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env,
                                 # the child should react to signals normally
                                 preexec_fn=_restore_signals)
    except OSError as exc:
        print(f"_supervise: cannot run {argv[0]!r}: {exc}", file=sys.stderr, flush=True)
        return 127
    while True:
        try:
            return child.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            pass
        if os.getppid() != parent:
            print("_supervise: parent process exited; stopping the server", file=sys.stderr, flush=True)
            _take_group_down(child)
            return 1


def _restore_signals() -> None:
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
