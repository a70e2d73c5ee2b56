"""What a person sees of a campaign in the terminal while it runs, and of each failed run.

**Progress.** The controller (the only process, or the xdist controller) counts the runs from
their reports (``campaign.progress.Progress``) and shows the count:

- on a terminal, one status line kept up to date in place, below pytest's own line. pytest's
  terminal writer keeps writing as it does (dots, ``-v`` lines, summaries) through a stand-in
  for its file (``_Sink``) that clears the status line before any of pytest's text and lets
  the next redraw put it back under it; a ticker thread redraws twice a second so the elapsed
  time and the estimate move while runs are in flight. The line is written to a duplicate of the
  terminal's descriptor, so pytest's output capture (which redirects descriptor 1 while a test
  runs) never takes it into a test's captured output.
- otherwise (CI, a pipe, ``--capture=no`` where tests may print straight to the terminal), a
  plain line every ``PLAIN_EVERY_RUNS`` runs or every ``PLAIN_EVERY_S`` seconds, and one at the end.

``-q`` keeps the status line and drops the plain lines; ``-qq`` and ``-p no:terminal`` show
neither. No library fits here: rich's ``Live`` and enlighten own the screen or the stream
(they redirect or reserve it), which pytest's writer, its capture and xdist's lines also
write to; pytest-sugar replaces pytest's reporter; tqdm redraws only around its own writes.

**Failed runs.** A failed agent run's report carries, in place of pytest's traceback of the
checker, a block of a few lines (``campaign.failureblock``): unless the user asks for the
traceback (``--agentic-tb=full``, ``--tb=long|short|native`` or ``-vv``). The block is what
the FAILURES section, the short summary and JUnit show; it is made on the controller, which
knows where the campaign folder is.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest

from . import internals, options, outcome
from .campaign.progress import Progress
from .campaign.writer import Campaign
from .run.records import RunRecord
from .session import AgenticSession

#: A plain progress line is written every this many runs done, or after this many seconds.
PLAIN_EVERY_RUNS = 10
PLAIN_EVERY_S = 30.0
#: The status line is redrawn at most this often on events (the ticker adds two a second).
MIN_REDRAW_S = 0.1
TICK_S = 0.5

#: How progress is shown: one status line rewritten in place, or plain lines.
DisplayMode = Literal["live", "plain"]

_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")


class _Sink:
    """Stands in for pytest's terminal file: pytest's text goes through, the status line is kept below it.

    ``column`` is where pytest's cursor stands on its current line (its text, escape sequences
    left out). The status line is drawn on that line when it is empty, else on the next one, and
    cleared (the cursor put back where pytest left it) before pytest writes again.
    """

    def __init__(self, file: Any, fd: int, width: int) -> None:
        self.file = file
        self.fd = fd
        self.width = width
        self.lock = threading.RLock()
        self.column = 0
        self.shown: str | None = None
        #: A plain progress line waiting for pytest's line to end (made when it is written).
        self.pending: Callable[[], str] | None = None

    def write(self, text: str) -> int:
        with self.lock:
            self._erase()
            written = self.file.write(text)
            self.file.flush()
            tail = _ESCAPE.sub("", text.rsplit("\n", 1)[-1])
            if "\r" in tail:
                self.column = len(tail.rsplit("\r", 1)[-1])
            else:
                self.column = len(tail) + (self.column if "\n" not in text else 0)
            if self.column == 0:
                self._print_pending()
            return written

    def flush(self) -> None:
        with self.lock:
            self.file.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.file, name)

    def _raw(self, text: str) -> None:
        os.write(self.fd, text.encode("utf-8", "replace"))

    def _erase(self) -> None:
        if self.shown is None:
            return
        self._raw("\r\x1b[K" + (f"\x1b[1A\x1b[{self.column + 1}G" if self.column else ""))
        self.shown = None

    def show(self, line: str) -> None:
        """Draw ``line`` (plain ASCII) as the status line, cut to the screen."""
        with self.lock:
            if line == self.shown:
                return
            self._erase()
            if self.column >= self.width - 1:
                return  # pytest's line fills the screen: wait until it ends
            self._raw(("\r\n" if self.column else "\r") + line[: self.width - 1])
            self.shown = line

    def print_line(self, line: Callable[[], str], force: bool = False) -> None:
        """Write ``line()`` as a line of its own (plain progress): when pytest's line ends, or now if ``force``."""
        with self.lock:
            self.pending = line
            if force or self.column == 0:
                self._print_pending()

    def _print_pending(self) -> None:
        if self.pending is not None:
            self._raw(("\n" if self.column else "") + self.pending() + "\n")
            self.column = 0
            self.pending = None

    def clear(self) -> None:
        with self.lock:
            self._erase()


def _terminal_fd(file: Any) -> int | None:
    try:
        return os.dup(file.fileno())
    except (AttributeError, OSError, ValueError):
        return None  # not a real file (pytester's in-process runs): no sink


class TerminalView:
    """The controller's terminal: the status line or plain progress lines, and failed runs' blocks."""

    def __init__(self, session: AgenticSession, campaign: Campaign, agentic: Callable[[], bool]) -> None:
        self.session = session
        self.campaign = campaign
        #: Whether this session evaluates models at all (asked when the run loop starts).
        self.agentic = agentic
        self.config = session.config
        self.progress = Progress()
        self.mode: DisplayMode | None = None  # None: no progress shown
        self.sink: _Sink | None = None
        self.reporter: Any = None
        self._tw: Any = None
        self._last_draw = 0.0
        self._last_plain = (float("-inf"), 0)  # (when, runs done) of the last plain line
        #: Since when a plain line has waited for pytest's line to end (None: none waits).
        self._pending_since: float | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._lock = threading.Lock()
        self.items_started = False
        #: The session's agent runs (node ids), and those announced by their setup report and not yet judged.
        self.agent_ids: set[str] = set()
        self.running: set[str] = set()

    # -- failed runs ------------------------------------------------------------------
    def full_traceback(self) -> bool:
        """Whether the user asked for pytest's own report of a failed run (the checker's traceback)."""
        choice = options.option(self.config, options.TB)
        if choice is not None:
            return choice == options.FULL_TRACEBACK
        return self.config.getoption("tbstyle", "auto") in ("long", "short", "native") or self.verbosity() >= 2

    def verbosity(self) -> int:
        return int(self.config.getoption("verbose", 0) or 0)  # the option is pytest's terminal plugin's

    def make_concise(self, report: pytest.TestReport, record: RunRecord) -> None:
        from .report.views import run_id

        folder = self.campaign.ensure_folder()
        folder = folder.resolve()
        page = (folder / "report.html").as_uri()
        transcript = outcome.transcript_of(report)
        outcome.make_concise(report, record, transcript, str(folder / record["transcript"]),
                             f"{page}#{run_id(record['task'], record['run'], record['model'])}")

    # -- reports ----------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Iterator[None]:
        # Before every other reporter (JUnit reads the failure as the report arrives), after them the redraw.
        record = outcome.record_of(report)
        if record is not None and report.failed and not self.full_traceback():
            self.make_concise(report, record)
        self.count(report, record)
        try:
            return (yield)
        finally:
            self.refresh(judged=record is not None)

    def count(self, report: pytest.TestReport, record: RunRecord | None) -> None:
        process = internals.report_process(report)
        in_flight = getattr(report, outcome.IN_FLIGHT_ATTR, None)
        if in_flight is not None:
            self.progress.in_flight_by[process] = int(in_flight)
        if outcome.started_of(report) is not None:
            self.running.add(report.nodeid)
            self.progress.begin()
        elif record is not None:
            self.running.discard(report.nodeid)
            self.progress.judge(record)
        elif report.when == "???" and report.nodeid in self.running:
            # xdist: the worker died with the run in flight; the controller records it lost.
            self.running.discard(report.nodeid)
            self.progress.in_flight_by[process] = 0
            self.progress.judge({"failure_mode": "infra_error", "cost_usd": 0.0})
        elif report.skipped and report.when == "setup" and report.nodeid in self.agent_ids:
            self.progress.skipped += 1

    # -- what the session selected --------------------------------------------------------
    def select(self, nodeids: list[str]) -> None:
        """The agent runs among the session's items (by the parametrize id the plugin gives them)."""
        models = [e.name for e in self.session.selected_models()] if self.session.models_path.is_file() else []
        pattern = re.compile(r"[\[-](?:%s)-run\d+\]$" % "|".join(map(re.escape, models))) if models else None
        ids = {n for n in nodeids if pattern is not None and pattern.search(n)}
        self.agent_ids = ids
        self.progress.selected = len(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.progress.selected:
            self.select(list(ids))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Iterator[None]:
        self.select([item.nodeid for item in session.items])
        self.start()
        try:
            return (yield)
        finally:
            self.stop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logstart(self) -> Iterator[None]:
        # Drawn from the first test on: before it, xdist's workers may still write to the terminal as they start.
        self.items_started = True
        try:
            return (yield)
        finally:
            self.refresh()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logfinish(self) -> Iterator[None]:
        try:
            return (yield)
        finally:
            self.refresh()

    def pytest_unconfigure(self) -> None:
        self.stop()

    # -- drawing ----------------------------------------------------------------------
    def choose_mode(self, reporter: Any) -> DisplayMode | None:
        verbosity = self.verbosity()
        if reporter is None or verbosity <= -2 or self.config.option.collectonly:
            return None
        capture_no = self.config.getoption("capture", "fd") == "no"
        if reporter.isatty() and not capture_no and os.environ.get("TERM") != "dumb":
            return "live"
        return "plain" if verbosity >= 0 else None

    def start(self) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        self.mode = self.choose_mode(reporter)
        if self.mode is None or not self.agentic():
            self.mode = None
            return
        self.reporter = reporter
        self.progress.started_at = time.monotonic()
        self._tw = self.config.get_terminal_writer()
        fd = _terminal_fd(internals.terminal_file(self._tw))
        if fd is not None:
            self.sink = _Sink(internals.terminal_file(self._tw), fd, self._tw.fullwidth)
            internals.set_terminal_file(self._tw, self.sink)
            if self.config.getoption("capture", "fd") != "no":
                self._ticker = threading.Thread(target=self._tick, name="agentic-progress", daemon=True)
                self._ticker.start()
        elif self.mode == "live":
            self.mode = "plain" if self.verbosity() >= 0 else None

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            self.refresh(tick=True)

    def refresh(self, judged: bool = False, tick: bool = False) -> None:
        with self._lock:  # the ticker's thread and pytest's both refresh
            # Only once agent runs are known to be selected: a session of other tests (the harness's
            # own, in a project with a models.yaml) shows no progress. Under xdist they are known when
            # the first worker has collected, before any test runs.
            if self.mode is not None and self.items_started and self.progress.selected:
                self._refresh(time.monotonic(), judged, tick)

    def _refresh(self, now: float, judged: bool, tick: bool) -> None:
        if self.mode == "live":
            if self.sink is not None and (judged or tick or now - self._last_draw >= MIN_REDRAW_S):
                self._last_draw = now
                self.sink.show(self.progress.line(now))
            return
        last_s, last_done = self._last_plain
        waiting = self.sink is not None and self.sink.pending is not None
        if waiting and self._pending_since is not None and now - self._pending_since >= PLAIN_EVERY_S:
            self.plain(force=True)  # pytest's line has not ended for long: write it now
        elif self.progress.done - last_done >= PLAIN_EVERY_RUNS or now - last_s >= PLAIN_EVERY_S:
            self._last_plain = (now, self.progress.done)
            self.plain(force=False)
        if self.sink is not None and self.sink.pending is not None:
            self._pending_since = self._pending_since if self._pending_since is not None else now
        else:
            self._pending_since = None

    def plain(self, force: bool) -> None:
        """A plain line: after pytest's current line ends, or now if ``force`` (one has waited long)."""
        if self.sink is not None:
            self.sink.print_line(self.progress.line, force)
        elif self.reporter is not None:
            self.reporter.write_line(self.progress.line())

    def stop(self) -> None:
        """Stop the ticker, clear the status line and give pytest its file back (once)."""
        self._stop.set()
        ticker, self._ticker = self._ticker, None
        if ticker is not None:
            ticker.join()
        with self._lock:
            self._stop_drawing()

    def _stop_drawing(self) -> None:
        waiting = self.sink is not None and self.sink.pending is not None
        if self.mode == "plain" and self.progress.selected and (waiting or self.progress.done != self._last_plain[1]):
            self.plain(force=True)  # where the campaign ended
        self.mode = None
        if self.sink is not None:
            self.sink.clear()
            internals.set_terminal_file(self._tw, self.sink.file)
            os.close(self.sink.fd)
            self.sink = None
