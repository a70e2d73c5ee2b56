"""Headless Chromium (Debian's ``chromium``) for the tests that look at a page as a person would.

``dump_dom`` returns the DOM after the page's scripts ran (``--dump-dom``), read into a small tree
with the standard library's HTML parser (the tree-building is the only hand-written part: a
dozen lines, where a parsing library would be a dependency for two tests).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

#: Elements that never have children (HTML's void elements).
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _command(profile: Path) -> list[str]:
    exe = chromium()
    assert exe is not None
    return [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
            "--hide-scrollbars", f"--user-data-dir={profile}"]


def dump_dom(url: str, profile: Path) -> str:
    done = subprocess.run([*_command(profile), "--dump-dom", url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip(), done.stderr[-2000:]
    return done.stdout


def screenshot(url: str, target: Path, profile: Path, size: str = "1280,1600") -> Path:
    done = subprocess.run([*_command(profile), f"--window-size={size}", f"--screenshot={target}", url],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and target.is_file(), done.stderr[-2000:]
    return target


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def iter(self, tag: str | None = None):
        if tag is None or self.tag == tag:
            yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter(tag)

    def by_id(self, id_: str) -> Node | None:
        return next((n for n in self.iter() if n.attrs.get("id") == id_), None)

    def with_class(self, cls: str) -> list[Node]:
        return [n for n in self.iter() if cls in (n.attrs.get("class") or "").split()]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):  # type: ignore[no-untyped-def]
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):  # type: ignore[no-untyped-def]
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag):  # type: ignore[no-untyped-def]
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):  # type: ignore[no-untyped-def]
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root
