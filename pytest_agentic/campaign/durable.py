"""A file made durable off the thread that writes it: ``fsync`` as a group commit.

The campaign appends one line to runs.jsonl as each run ends and closes the file: from then on the
line is the kernel's, and an interrupt, a killed process or a lost worker cannot take it. ``fsync``
is what keeps it through a crash of the machine itself, and it waits on the disk: about a millisecond
a record here, 3.0 s of the controller's main thread in a 3000-run campaign under ``-n 2``, while
that thread is what takes every worker's reports. So a thread of its own syncs: each write announced
is covered by an ``fsync`` that starts after it, and the writes announced while one runs share the
next. ``close`` returns once every announced write is covered; an ``fsync`` that failed is raised
there (and at the next announcement), never lost.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


class GroupSync:
    """``written()`` after each write to ``path``; ``close()`` once the writes are done."""

    def __init__(self, path: Path) -> None:
        #: Writes announced, and those a finished ``fsync`` covers (``fsyncs`` counts the calls).
        self.announced = 0
        self.covered = 0
        self.fsyncs = 0
        self._cond = threading.Condition()
        self._closed = False
        self._error: OSError | None = None
        # fsync makes the file durable whichever descriptor names it: a read-only one of our own.
        self._fd = os.open(path, os.O_RDONLY)
        self._thread = threading.Thread(target=self._loop, name="agentic-records-sync", daemon=True)
        self._thread.start()

    def written(self) -> None:
        with self._cond:
            self._raise_error()
            self.announced += 1
            self._cond.notify_all()

    def close(self) -> None:
        """Wait until every announced write is durable, then stop; raises what a failed ``fsync`` raised."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join()
        os.close(self._fd)
        with self._cond:
            self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _loop(self) -> None:
        while True:
            with self._cond:
                while self.announced == self.covered and not self._closed:
                    self._cond.wait()
                if self.announced == self.covered:
                    return
                target = self.announced
            error: OSError | None = None
            try:
                os.fsync(self._fd)
            except OSError as exc:
                error = exc
            with self._cond:
                self._error = self._error or error
                self.fsyncs += 1
                self.covered = target
                self._cond.notify_all()


__all__ = ["GroupSync"]
