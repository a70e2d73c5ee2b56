"""The workspace read as hostile input, by the harness's own readers (tools and checkers).

The box keeps model code away from the machine; what that code leaves in the workspace is then
read here, outside the box. So every reader opens only regular files, without following a link
and without blocking (``O_NOFOLLOW | O_NONBLOCK``, then ``fstat`` on the open descriptor, so a file
that changes type between the check and the open is caught too), reads a bounded number of bytes,
and walks a bounded number of entries. What is not a readable regular file is named, with what it
is: :class:`NotRegular` (a ``ToolError`` for the tools, an ``AssertionError`` for the checkers that
snapshot the workspace, so the run is judged: the model put the file there).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

#: Bytes of one file a snapshot holds at most (the box cannot write a file larger than 1 MiB).
MAX_SNAPSHOT_FILE_BYTES = 8 * 1024 * 1024
#: Bytes of all files a snapshot holds at most.
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
#: Entries (files, folders, links, ...) a walk of the workspace visits at most.
MAX_WALK_ENTRIES = 20_000
#: Folders a walk skips (caches the harness's own test runs leave).
SKIPPED_DIRS = ("__pycache__", ".pytest_cache")

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


class NotRegular(Exception):
    """A path of the workspace is not a readable regular file; the message names it and what it is."""

    def __init__(self, shown: str, kind: str) -> None:
        super().__init__(f"{shown} is {kind}")
        self.shown = shown
        self.kind = kind


def shown(text: str, limit: int = 200) -> str:
    """A path as an error quotes it: repr'd (control characters and undecodable bytes escaped), bounded."""
    return repr(text[:limit]) + ("..." if len(text) > limit else "")


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory, not a regular file"
    if stat.S_ISLNK(mode):
        return "a symbolic link (not followed)"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO); only regular files are read"
    if stat.S_ISSOCK(mode):
        return "a socket; only regular files are read"
    if stat.S_ISCHR(mode):
        return "a character device; only regular files are read"
    if stat.S_ISBLK(mode):
        return "a block device; only regular files are read"
    return "not a regular file"


def _os_kind(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link (not followed), or a loop of links"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "unreadable (permission denied)"
    if exc.errno == errno.ENOENT:
        return "missing (no such file)"
    if exc.errno == errno.ENXIO:
        return "a socket or a device without a reader; only regular files are read"
    if exc.errno == errno.ENAMETOOLONG:
        return "a name too long to open"
    return f"unreadable ({exc.strerror or exc})"


def open_regular(path: Path | str, name: str) -> int:
    """A descriptor of ``path`` opened for reading, when it is a regular file; else :class:`NotRegular`.

    The type is looked at before the open (a device or pipe is never opened) and again on the open
    descriptor (a file swapped for another kind in between is refused). The caller closes the fd.
    """
    try:
        before = os.lstat(path)
    except OSError as exc:
        raise NotRegular(name, _os_kind(exc)) from None
    if not stat.S_ISREG(before.st_mode):
        raise NotRegular(name, kind_of(before.st_mode))
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise NotRegular(name, _os_kind(exc)) from None
    try:
        now = os.fstat(fd)
    except OSError as exc:  # pragma: no cover - fstat of an open descriptor does not fail in practice
        os.close(fd)
        raise NotRegular(name, _os_kind(exc)) from None
    if not stat.S_ISREG(now.st_mode):
        os.close(fd)
        raise NotRegular(name, kind_of(now.st_mode) + " (it changed type while being opened)")
    return fd


def read_head(path: Path | str, name: str, limit: int) -> tuple[bytes, int]:
    """Up to ``limit + 1`` bytes of a regular file (so a caller sees that there is more) and its size."""
    fd = open_regular(path, name)
    try:
        size = os.fstat(fd).st_size
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks), size
    finally:
        os.close(fd)


def chunks(path: Path | str, name: str, limit: int, size: int = 1 << 20) -> Iterator[bytes]:
    """The first ``limit`` bytes of a regular file, in chunks (the rest is not read)."""
    fd = open_regular(path, name)
    try:
        left = limit
        while left > 0:
            chunk = os.read(fd, min(size, left))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk
    finally:
        os.close(fd)


def decoded_name(name: str) -> str | None:
    """``name`` when it is valid UTF-8 (``os`` gives undecodable bytes as lone surrogates), else None."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return name


def printable_name(name: str) -> str:
    """A name as a tool may show it: undecodable bytes as U+FFFD, never lone surrogates."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class WalkCut(Exception):
    """A walk met more entries than it may visit."""


def walk(root: Path, top: Path, limit: int = MAX_WALK_ENTRIES) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under ``top`` (relative POSIX path from ``root``, its ``lstat``), in sorted order.

    Links are reported, never followed; folders are entered only when they are real folders; the
    caches in ``SKIPPED_DIRS`` are skipped; an unreadable folder is reported as an entry of kind
    directory and not entered. More than ``limit`` entries raise :class:`WalkCut`.
    """
    seen = 0
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = []
                for entry in it:
                    seen += 1
                    if seen > limit:
                        raise WalkCut(f"more than {limit} entries")
                    entries.append(entry)
        except OSError:
            continue
        subdirs = []
        for entry in sorted(entries, key=lambda e: e.name):
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = Path(entry.path).relative_to(root).as_posix()
            if stat.S_ISDIR(info.st_mode):
                if entry.name not in SKIPPED_DIRS:
                    subdirs.append(Path(entry.path))
                continue
            yield rel, info
        stack.extend(reversed(subdirs))


class HostileWorkspace(AssertionError):
    """A checker's snapshot met something the model left that no reader opens: the run is judged."""


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file of the workspace, relative path -> content, bounded.

    A symbolic link is skipped (never followed, wherever it leads: a loop, a host file); a pipe,
    socket or device, an unreadable file, a name that is not UTF-8, a file over
    ``MAX_SNAPSHOT_FILE_BYTES``, more than ``MAX_SNAPSHOT_BYTES`` in all or more than
    ``MAX_WALK_ENTRIES`` entries raise :class:`HostileWorkspace`, whose message names the path
    and what it is: the checker's verdict on the run.
    """
    root = Path(os.path.realpath(root))
    out: dict[str, bytes] = {}
    total = 0
    try:
        for rel, info in walk(root, root):
            name = shown(printable_name(rel))
            if decoded_name(rel) is None:
                raise HostileWorkspace(f"the workspace holds {name}, a file whose name is not UTF-8")
            if stat.S_ISLNK(info.st_mode):
                continue  # never followed, wherever it leads (a loop, a host file): not a file of the workspace
            if not stat.S_ISREG(info.st_mode):
                raise HostileWorkspace(f"the workspace holds {name}, {kind_of(info.st_mode)}")
            if info.st_size > MAX_SNAPSHOT_FILE_BYTES:
                raise HostileWorkspace(f"the workspace holds {name}, a file of {info.st_size} bytes (more than "
                                       f"the {MAX_SNAPSHOT_FILE_BYTES} a checker reads)")
            try:
                data, size = read_head(root / rel, name, MAX_SNAPSHOT_FILE_BYTES)
            except NotRegular as exc:
                raise HostileWorkspace(f"the workspace holds {exc}") from None
            if len(data) > MAX_SNAPSHOT_FILE_BYTES:
                raise HostileWorkspace(f"the workspace holds {name}, a file that grew past the "
                                       f"{MAX_SNAPSHOT_FILE_BYTES} bytes a checker reads")
            total += len(data)
            if total > MAX_SNAPSHOT_BYTES:
                raise HostileWorkspace(f"the workspace holds more than {MAX_SNAPSHOT_BYTES} bytes of files "
                                       f"(reached at {name}); a checker reads no more")
            out[rel] = data
    except WalkCut as exc:
        raise HostileWorkspace(f"the workspace holds {exc}; a checker reads no more") from None
    return out


__all__ = ["HostileWorkspace", "NotRegular", "chunks", "kind_of", "open_regular", "read_head", "snapshot",
           "walk"]
