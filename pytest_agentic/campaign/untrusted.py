"""Text a model, a tool or an endpoint wrote, made safe to show in the terminal and in Markdown.

The HTML report escapes with Jinja2's autoescape; Markdown and the terminal have no such layer.
A checker's message can quote the model's answer and an infra cause can quote an endpoint's
reply, so before either reaches ``summary.md`` or the terminal it becomes one line without
control characters (no ANSI escape can recolour or rewrite the terminal) inside a Markdown code
span (no link, image, HTML tag or table cell break is rendered from it).
"""

from __future__ import annotations

import re

# ANSI/VT escape sequences (CSI, OSC and two-character forms), then any other control character.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def one_line(text: object, limit: int = 200) -> str:
    """``text`` on one line, without escape sequences or control characters, at most ``limit`` characters."""
    s = _ESCAPES.sub("", str(text))
    s = " ".join(_CONTROL.sub(" ", s).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def code_span(text: object, limit: int = 200) -> str:
    """``text`` as an inline Markdown code span that renders literally, also inside a table cell."""
    s = one_line(text, limit).replace("`", "'").replace("|", "¦")
    return f"`{s}`" if s else ""
