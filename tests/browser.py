"""Headless Chromium (Debian's ``chromium``) for the tests that look at a page as a person would.

``dump_dom`` returns the DOM after the page's scripts ran (``--dump-dom``), read into a small tree
with the standard library's HTML parser (the tree-building is the only hand-written part: a
dozen lines, where a parsing library would be a dependency for two tests). ``Session`` drives a
page that loads its data after the first paint (an application such as ``inspect view``): the
browser's own DevTools protocol over ``--remote-debugging-pipe`` (JSON messages ended by a NUL
byte on file descriptors 3 and 4), so no driver library is needed.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

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


class Session:
    """One headless Chromium page driven over the DevTools protocol (``with Session(profile) as page``)."""

    def __init__(self, profile: Path, width: int = 1500, height: int = 900) -> None:
        to_browser, from_browser = os.pipe(), os.pipe()
        # Above 4, so that placing them at 3 and 4 in the child never meets an fd already there.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (*to_browser, *from_browser)]
        for fd in (*to_browser, *from_browser):
            os.close(fd)
        devnull = os.open(os.devnull, os.O_WRONLY)
        argv = [*_command(profile), "--remote-debugging-pipe", f"--window-size={width},{height}", "about:blank"]
        self.pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
            (os.POSIX_SPAWN_DUP2, high[0], 3), (os.POSIX_SPAWN_DUP2, high[3], 4),
            (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
        for fd in (high[0], high[3], devnull):
            os.close(fd)
        self._out, self._in = high[1], high[2]
        self._buffer = b""
        self._next = 0
        target = next(t["targetId"] for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self._session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", page=True, width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def call(self, method: str, page: bool = False, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if page:
            message["sessionId"] = self._session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self._buffer:
                chunk = os.read(self._in, 1 << 20)
                assert chunk, f"chromium closed the DevTools pipe during {method}"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._next:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return dict(reply["result"])

    def go(self, url: str) -> None:
        self.call("Page.navigate", page=True, url=url)

    def js(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", page=True, expression=expression, returnByValue=True)["result"].get("value")

    def text(self) -> str:
        return str(self.js("document.body ? document.body.innerText : ''"))

    def wait_for(self, text: str, timeout: float = 60) -> str:
        """The page's text once it shows ``text`` (an assertion naming what it shows after ``timeout``)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            shown = self.text()
            if text in shown:
                return shown
            time.sleep(0.25)
        raise AssertionError(f"the page never showed {text!r}; it shows: {self.text()[:2000]!r}")

    def screenshot(self, target: Path) -> Path:
        target.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", page=True, format="png")["data"]))
        return target

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._out)
        os.close(self._in)
        try:
            os.kill(self.pid, 15)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)


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
