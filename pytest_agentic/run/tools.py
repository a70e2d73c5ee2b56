"""The tools an agent may call, each confined to the run's workspace.

A tool that cannot do what it was asked raises :class:`ToolError`; the agent
loop hands the message back to the model as the tool's result. Any other
exception is a bug of the harness.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import safefs, sandbox

#: Bytes of a file that ``fs_read`` returns at most.
MAX_READ_BYTES = 64 * 1024
#: Bytes that ``fs_write`` accepts at most.
MAX_WRITE_BYTES = 1024 * 1024
#: Bytes of a command's output kept (the rest is cut, and the cut is said).
MAX_OUTPUT_BYTES = 16 * 1024
#: Rows ``sql_query`` returns at most.
MAX_SQL_ROWS = 200
#: Entries ``fs_list`` returns at most.
MAX_LIST_ENTRIES = 500
#: Seconds a tool's subprocess may run, unless the run's limits say otherwise.
DEFAULT_TOOL_TIMEOUT = 60.0
#: Bytes of one file ``fs_read`` scans at most to count or pick lines (a terabyte file is cut, and said).
MAX_SCAN_BYTES = 16 * 1024 * 1024

_shown = safefs.shown


class ToolError(Exception):
    """A tool could not do what was asked; the message goes back to the model."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: Mapping[str, Any]
    fn: Callable[[Workspace, Mapping[str, Any]], str]

    def call(self, workspace: Workspace, args: Mapping[str, Any]) -> str:
        """Run the tool; an OS-level failure (name too long, not permitted, ...) is a tool error too,
        and so is a path that is not a readable regular file (a pipe, a device, a link, ...)."""
        try:
            return self.fn(workspace, args)
        except safefs.NotRegular as exc:
            raise ToolError(f"{self.name}: {exc}") from None
        except OSError as exc:
            raise ToolError(f"{self.name} failed: {exc.strerror or exc}") from None

    def schema(self) -> dict[str, Any]:
        """The OpenAI-style tool schema offered to the model."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


class Workspace:
    """A run's working directory; every path a tool touches is resolved here."""

    def __init__(self, root: Path, *, tool_timeout: float = DEFAULT_TOOL_TIMEOUT) -> None:
        self.root = Path(os.path.realpath(root))
        self.tool_timeout = tool_timeout

    def populate(self, files: Mapping[str, str | bytes]) -> None:
        for rel, data in files.items():
            path = self.resolve(rel, for_write=True)
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, bytes):
                path.write_bytes(data)
            else:
                path.write_text(data, encoding="utf-8")

    def resolve(self, rel: Any, *, for_write: bool = False) -> Path:
        """The real path of ``rel`` inside the workspace, or :class:`ToolError`."""
        if not isinstance(rel, str):
            raise ToolError(f"path must be a string, got {type(rel).__name__}")
        if "\x00" in rel:
            raise ToolError("path contains a NUL byte")
        if rel.strip() == "":
            rel = "."
        if os.path.isabs(rel) or rel.startswith("~"):
            raise ToolError(f"path {_shown(rel)} is absolute; use a path relative to the workspace")
        candidate = self.root / rel
        real = Path(os.path.realpath(candidate))
        if real != self.root and self.root not in real.parents:
            raise ToolError(f"path {_shown(rel)} is outside the workspace")
        if for_write and candidate.is_symlink():
            raise ToolError(f"path {_shown(rel)} is a symbolic link; refusing to write through it")
        return real

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."

    def snapshot(self) -> dict[str, bytes]:
        """Every regular file of the workspace, relative path -> content, bounded; what no reader
        opens (a pipe, a device, a link out, ...) is a ``safefs.HostileWorkspace``: the run is judged."""
        return safefs.snapshot(self.root)


def _fs_read(ws: Workspace, args: Mapping[str, Any]) -> str:
    path = ws.resolve(args["path"])
    name = _shown(args["path"])
    if not os.path.lexists(path):
        raise ToolError(f"no such file: {args['path']}")
    if path.is_dir() and not path.is_symlink():
        raise ToolError(f"{args['path']} is a directory; use fs_list")
    start, end = args.get("start_line"), args.get("end_line")
    if start is None and end is None:
        data, size = safefs.read_head(path, name, MAX_READ_BYTES)
        text = data[:MAX_READ_BYTES].decode("utf-8", errors="replace")
        if len(data) > MAX_READ_BYTES:
            text += (f"\n[... cut: the file is {size} bytes, larger than {MAX_READ_BYTES}, and has "
                     f"{_count_lines(path, name)} lines; read the rest with start_line and end_line]")
        return text
    return _read_lines(path, args["path"], _line_number(start, "start_line", 1), _line_number(end, "end_line", None))


def _line_number(value: Any, name: str, default: int | None) -> int | None:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        raise ToolError(f"{name} must be a whole number of 1 or more, got {value!r}")
    return int(value)


def _count_lines(path: Path, name: str) -> str:
    """Lines of a file (a last line without a newline counts), read in bounded chunks; past
    ``MAX_SCAN_BYTES`` the count is a lower bound and says so."""
    lines, last, seen = 0, b"\n", 0
    for chunk in safefs.chunks(path, name, MAX_SCAN_BYTES + 1):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
        seen += len(chunk)
    if seen > MAX_SCAN_BYTES:
        return f"more than {lines} (only its first {MAX_SCAN_BYTES} bytes are read)"
    return str(lines + (last != b"\n"))


def _read_lines(path: Path, shown: str, start: int | None, end: int | None) -> str:
    """Lines ``start``..``end`` (1-based, inclusive) of a file, with a note saying what was cut."""
    assert start is not None
    if end is not None and end < start:
        raise ToolError(f"end_line {end} is before start_line {start}")
    picked: list[bytes] = []
    size, total, cut_at, scanned = 0, 0, None, False
    name = _shown(shown)
    for number, line in enumerate(_lines(path, name), start=1):
        if line is None:  # the scan's limit: a terabyte file is not read to its end
            scanned = True
            break
        total = number
        if number < start or (end is not None and number > end) or cut_at is not None:
            continue
        if size + len(line) > MAX_READ_BYTES:
            cut_at = number
            continue
        picked.append(line)
        size += len(line)
    of_total = f"more than {total}" if scanned else str(total)
    if start > total:
        raise ToolError(f"start_line {start} is past the end of {shown}, which has {total} lines"
                        + (f" in its first {MAX_SCAN_BYTES} bytes (no more is read)" if scanned else ""))
    last = min(end if end is not None else total, total)
    text = b"".join(picked).decode("utf-8", errors="replace")
    if cut_at is not None:
        return text + (f"\n[... cut at {MAX_READ_BYTES} bytes: lines {start}-{cut_at - 1} of {of_total} shown; "
                       f"continue from start_line {cut_at}]")
    if scanned:
        return text + ("" if text.endswith("\n") or not text else "\n") + (
            f"[lines {start}-{last} of more than {total}: only the first {MAX_SCAN_BYTES} bytes are read]")
    if start == 1 and last == total:
        return text
    return text + ("" if text.endswith("\n") or not text else "\n") + f"[lines {start}-{last} of {total}]"


def _lines(path: Path, name: str) -> Iterator[bytes | None]:
    """The file's lines (of a line longer than ``MAX_READ_BYTES``, only its start is kept), then None
    when the file goes on past ``MAX_SCAN_BYTES`` (the rest is not read)."""
    keep = MAX_READ_BYTES + 1
    line, seen = bytearray(), 0
    for chunk in safefs.chunks(path, name, MAX_SCAN_BYTES + 1):
        seen += len(chunk)
        if seen > MAX_SCAN_BYTES:
            chunk = chunk[: len(chunk) - (seen - MAX_SCAN_BYTES)]
        pos = 0
        while pos < len(chunk):
            at = chunk.find(b"\n", pos)
            stop = len(chunk) if at < 0 else at + 1
            line += chunk[pos:min(stop, pos + max(keep - len(line), 0))]
            pos = stop
            if at >= 0:
                yield bytes(line)
                line = bytearray()
    if line:
        yield bytes(line)
    if seen > MAX_SCAN_BYTES:
        yield None


def _fs_write(ws: Workspace, args: Mapping[str, Any]) -> str:
    content = args["content"]
    encoded = content.encode("utf-8", errors="surrogatepass")
    if len(encoded) > MAX_WRITE_BYTES:
        raise ToolError(f"content is {len(encoded)} bytes; the limit is {MAX_WRITE_BYTES}")
    path = ws.resolve(args["path"], for_write=True)
    if path == ws.root or path.is_dir():
        raise ToolError(f"{args['path']} is a directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    # Re-check after mkdir: a planted link in the parents must not lead out.
    path = ws.resolve(args["path"], for_write=True)
    _write_bytes(path, encoded)
    return f"wrote {len(encoded)} bytes to {ws.relative(path)}"


def _write_bytes(path: Path, data: bytes) -> None:
    """Write a regular file: never through a link, never into a pipe or device (which could block)."""
    name = _shown(str(path.name))
    if os.path.lexists(path):
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            raise safefs.NotRegular(name, safefs.kind_of(info.st_mode))
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise safefs.NotRegular(name, "a symbolic link, pipe or device; only regular files are written") from None
        raise
    with os.fdopen(fd, "wb") as fh:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # it changed type between the check and the open
            raise safefs.NotRegular(name, safefs.kind_of(mode) + " (it changed type while being opened)")
        os.ftruncate(fd, 0)
        fh.write(data)


def _fs_edit(ws: Workspace, args: Mapping[str, Any]) -> str:
    shown, old, new = args["path"], args["old_text"], args["new_text"]
    path = ws.resolve(shown, for_write=True)
    if not os.path.lexists(path):
        raise ToolError(f"no such file: {shown}; fs_edit changes an existing file (fs_write creates one)")
    if old == "":
        raise ToolError("old_text is empty; give the exact text to replace")
    data, size = safefs.read_head(path, _shown(shown), MAX_WRITE_BYTES)
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError(f"{shown} is {size} bytes, larger than {MAX_WRITE_BYTES}; fs_edit does not change it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not a UTF-8 text file") from None
    found = text.count(old)
    if found == 0:
        raise ToolError(f"old_text was not found in {shown}; it must match the file exactly, "
                        "including indentation, spaces and line breaks (read the file again)")
    if found > 1:
        raise ToolError(f"old_text occurs {found} times in {shown}; include more of the surrounding "
                        "lines so that it matches exactly one place")
    at = text.index(old)
    updated = text[:at] + new + text[at + len(old):]
    encoded = updated.encode("utf-8", errors="surrogatepass")
    if len(encoded) > MAX_WRITE_BYTES:
        raise ToolError(f"the edited file would be {len(encoded)} bytes; the limit is {MAX_WRITE_BYTES}")
    path = ws.resolve(shown, for_write=True)  # re-checked just before writing
    _write_bytes(path, encoded)
    first = text.count("\n", 0, at) + 1
    old_lines, new_lines = old.count("\n") + (not old.endswith("\n")), new.count("\n") + (not new.endswith("\n"))
    return (f"edited {ws.relative(path)}: replaced {old_lines} line(s) from line {first} with "
            f"{new_lines if new else 0} line(s); the file now has {_count_lines(path, _shown(shown))} lines")


def _fs_list(ws: Workspace, args: Mapping[str, Any]) -> str:
    path = ws.resolve(args.get("path", "."))
    if not path.is_dir():
        raise ToolError(f"not a directory: {args.get('path', '.')}")
    lines = []
    try:
        for rel, info in safefs.walk(ws.root, path):
            note = "" if stat.S_ISREG(info.st_mode) else f"  [{safefs.kind_of(info.st_mode).split(';')[0]}]"
            if safefs.decoded_name(rel) is None:
                note += "  [name is not UTF-8; no tool can name it]"
            lines.append(safefs.printable_name(rel) + note)
            if len(lines) >= MAX_LIST_ENTRIES:
                lines.append(f"[... cut at {MAX_LIST_ENTRIES} entries]")
                return "\n".join(lines)
    except safefs.WalkCut as exc:
        lines.append(f"[... cut: the folder holds {exc}; list a smaller folder]")
    return "\n".join(lines) if lines else "(empty)"


def run_bounded(ws: Workspace, argv: list[str], timeout: float) -> str:
    """Run ``argv`` in the workspace, in the sandbox, with a timeout and its output bounded.

    What it prints is for the model to read; no verdict is taken from it (see ``run.probe``).
    """
    with tempfile.TemporaryFile() as out:
        done = sandbox.execute(argv, ws.root, timeout=timeout, stdout=out.fileno(), stderr=out.fileno(),
                               pytest_path=True)
        status = f"timed out after {timeout:g}s and was stopped" if done.timed_out else f"exit code {done.returncode}"
        out.seek(0)
        data = out.read(MAX_OUTPUT_BYTES + 1)
    text = data[:MAX_OUTPUT_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_OUTPUT_BYTES:
        text += f"\n[... output cut at {MAX_OUTPUT_BYTES} bytes]"
    return f"{text}\n[{status}]"


def _run_tests(ws: Workspace, args: Mapping[str, Any]) -> str:
    target = args.get("path", ".")
    ws.resolve(target)  # containment check; the resolved path must exist inside
    if target.startswith("-"):
        raise ToolError("path must be a file or folder, not an option")
    argv = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "--rootdir", str(ws.root), "--", target,
    ]
    return run_bounded(ws, argv, ws.tool_timeout)


def _sql_query(ws: Workspace, args: Mapping[str, Any]) -> str:
    db = ws.resolve(args["database"])
    if not os.path.lexists(db) or db.is_dir():
        raise ToolError(f"no such database file: {args['database']}")
    query = args["query"]
    if "\x00" in query:
        raise ToolError("query contains a NUL byte")
    # Opened as a regular file first (never a pipe or device), then read by SQLite through that very
    # descriptor, read-only and immutable: no lock, no journal, nothing written, nothing waited on.
    fd = safefs.open_regular(db, _shown(args["database"]))
    try:
        through = f"/proc/self/fd/{fd}" if os.path.isdir("/proc/self/fd") else str(db)
        conn = sqlite3.connect(f"file:{through}?mode=ro&immutable=1", uri=True, timeout=1.0)
    except sqlite3.Error as exc:
        os.close(fd)
        raise ToolError(f"cannot open {args['database']} as a SQLite database: {exc}") from None
    try:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_read_only_authorizer)
        conn.set_progress_handler(_deadline(ws.tool_timeout), 10_000)
        try:
            cur = conn.execute(query)
            cols = [d[0] for d in cur.description or ()]
            rows = cur.fetchmany(MAX_SQL_ROWS + 1)
        except sqlite3.Error as exc:
            raise ToolError(f"SQL error: {exc}") from None
    finally:
        conn.close()
        os.close(fd)
    lines = [" | ".join(cols)] if cols else []
    lines += [" | ".join("NULL" if v is None else str(v) for v in row) for row in rows[:MAX_SQL_ROWS]]
    if len(rows) > MAX_SQL_ROWS:
        lines.append(f"[... cut at {MAX_SQL_ROWS} rows]")
    return "\n".join(lines) if lines else "(no rows)"


_ALLOWED_SQL = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
#: Pragmas that only describe the schema: allowed as statements and in their ``pragma_*`` table-valued
#: forms. Every other pragma (``user_version = 5``, ``writable_schema``, ...) is refused.
READ_ONLY_PRAGMAS = frozenset({"table_info", "table_xinfo", "table_list", "index_list", "index_info",
                               "index_xinfo", "foreign_key_list"})
_SCHEMA_TABLES = {"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"}


def _read_only_authorizer(action: int, arg1: Any, arg2: Any, dbname: Any, source: Any) -> int:
    """SQLite's own authorizer decides (no SQL is parsed here); the database is also opened read-only
    with ``query_only`` on, so a write that got past this would still fail."""
    if action in _ALLOWED_SQL:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and isinstance(arg1, str) and arg1.lower() in READ_ONLY_PRAGMAS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_UPDATE and arg1 in _SCHEMA_TABLES and source is None:
        # Asked by SQLite itself when a pragma_* table-valued function first reads the schema; an
        # UPDATE of the schema by a query still fails (read-only database, query_only, no writable_schema).
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _deadline(seconds: float) -> Callable[[], int]:
    import time

    end = time.monotonic() + seconds
    return lambda: 1 if time.monotonic() > end else 0


_STR = {"type": "string"}
_LINE = {"type": "integer", "minimum": 1}

TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        Tool("fs_read", "Read a text file of the workspace, whole or a range of its lines (the reply says "
                        "the file's length in lines when it shows only part of it).",
             {"type": "object", "properties": {"path": {**_STR, "description": "path relative to the workspace"},
                                               "start_line": {**_LINE, "description": "first line to show (1-based)"},
                                               "end_line": {**_LINE, "description": "last line to show (inclusive)"}},
              "required": ["path"], "additionalProperties": False}, _fs_read),
        Tool("fs_edit", "Replace one exact snippet of an existing file of the workspace: old_text must occur "
                        "exactly once in the file (an error says so when it is missing or not unique); the rest "
                        "of the file is left byte for byte as it was.",
             {"type": "object", "properties": {"path": {**_STR, "description": "path relative to the workspace"},
                                               "old_text": {**_STR, "description": "the exact text to replace, "
                                                            "including indentation and line breaks"},
                                               "new_text": {**_STR, "description": "the text to put in its place"}},
              "required": ["path", "old_text", "new_text"], "additionalProperties": False}, _fs_edit),
        Tool("fs_write", "Create or overwrite a file of the workspace with the given content.",
             {"type": "object", "properties": {"path": {**_STR, "description": "path relative to the workspace"},
                                               "content": {**_STR, "description": "the complete new file content"}},
              "required": ["path", "content"], "additionalProperties": False}, _fs_write),
        Tool("fs_list", "List the files under a folder of the workspace (recursively).",
             {"type": "object", "properties": {"path": {**_STR, "description": "folder relative to the workspace; default '.'"}},
              "additionalProperties": False}, _fs_list),
        Tool("run_tests", "Run the workspace's tests with pytest and return the output.",
             {"type": "object", "properties": {"path": {**_STR, "description": "test file or folder; default: all tests"}},
              "additionalProperties": False}, _run_tests),
        Tool("sql_query", "Run one read-only SQL query on a SQLite database file of the workspace.",
             {"type": "object", "properties": {"database": {**_STR, "description": "database file relative to the workspace"},
                                               "query": {**_STR, "description": "a single SQL statement (read-only)"}},
              "required": ["database", "query"], "additionalProperties": False}, _sql_query),
    )
}


def get_tools(names: list[str] | tuple[str, ...]) -> list[Tool]:
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise KeyError(f"unknown tool(s) {unknown}; known: {sorted(TOOLS)}")
    return [TOOLS[n] for n in names]
