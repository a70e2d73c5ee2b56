"""Text a model, a tool or an endpoint wrote, made safe to show in the terminal, Markdown and HTML.

The HTML report escapes with Jinja2's autoescape; Markdown and the terminal have no such layer.
A checker's message can quote the model's answer and an infra cause can quote an endpoint's
reply, so before either reaches ``summary.md`` or the terminal it becomes one line without
control characters (no ANSI escape can recolour or rewrite the terminal) inside a Markdown code
span (no link, image, HTML tag or table cell break is rendered from it). Where the text keeps its
lines (a failed test's report in the terminal, the HTML page), :func:`printable` writes every
control character and lone surrogate as a visible escape (``\\x1b``) instead.
"""

from __future__ import annotations

import re

# ANSI/VT escape sequences (CSI, OSC and two-character forms), then any other control character.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# What ``printable`` escapes: the same, but tab and newline stay; lone surrogates too.
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def one_line(text: object, limit: int = 200) -> str:
    """``text`` on one line, without escape sequences or control characters, at most ``limit`` characters."""
    s = _ESCAPES.sub("", str(text))
    s = " ".join(_CONTROL.sub(" ", s).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def code_span(text: object, limit: int = 200) -> str:
    """``text`` as an inline Markdown code span that renders literally, also inside a table cell."""
    s = one_line(text, limit).replace("`", "'").replace("|", "¦")
    return f"`{s}`" if s else ""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with its lines kept, every other control character (ESC, NUL, CR, bidi overrides)
    and lone surrogate written as a visible escape: nothing in it acts on a terminal, and it
    encodes as UTF-8."""
    return _UNPRINTABLE.sub(_escape, text)
