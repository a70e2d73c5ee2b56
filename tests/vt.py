"""A session run under a pseudo-terminal, and what a VT100-style terminal shows of its output (tests only)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
from pathlib import Path

#: CSI sequences (cursor moves, erase, colours), OSC strings, other two-character escapes, or one character.
_TOKEN = re.compile(r"\x1b\[([0-?]*)[ -/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|.", re.S)


def run_in_pty(args: list[str], cwd: Path, columns: int = 120, timeout_s: float = 300.0) -> str:
    """Run ``python -m pytest args`` in ``cwd`` on a pseudo-terminal ``columns`` wide; all it wrote."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the terminal
        try:
            os.chdir(cwd)
            fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
            os.environ.pop("COLUMNS", None)
            os.execv(sys.executable, [sys.executable, "-m", "pytest", *args])
        finally:
            os._exit(127)
    chunks = []
    try:
        while select.select([fd], [], [], timeout_s)[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(fd)
        os.waitpid(pid, 0)
    return b"".join(chunks).decode("utf-8", "replace")


def render(raw: str, columns: int = 120) -> list[str]:
    """The lines a terminal ``columns`` wide shows after ``raw`` (scrollback kept, colours dropped).

    It acts on what the status line uses and what a hostile text might try: carriage return,
    line feed, backspace, erase to the end of the line, cursor up and cursor to a column;
    it wraps a line at the right edge.
    """
    lines: list[list[str]] = [[]]
    row = col = 0
    for match in _TOKEN.finditer(raw):
        token, params, final = match.group(), match.group(1), match.group(2)
        if final is not None:
            n = int(params) if params and params.isdigit() else 1
            if final == "K":
                del lines[row][col:]
            elif final == "A":
                row = max(0, row - n)
            elif final == "G":
                col = n - 1
            continue
        if token.startswith("\x1b"):
            continue
        if token == "\r":
            col = 0
        elif token == "\n":
            row += 1
        elif token == "\b":
            col = max(0, col - 1)
        elif token >= " ":
            if col >= columns:
                row, col = row + 1, 0
            while len(lines) <= row:
                lines.append([])
            line = lines[row]
            line.extend(" " * (col + 1 - len(line)))
            line[col] = token
            col += 1
        while len(lines) <= row:
            lines.append([])
    return ["".join(line).rstrip() for line in lines]
