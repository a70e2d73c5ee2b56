"""Hooks that run in the controller process only (the only process that writes)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from . import internals, options, outcome, scheduler
from .campaign import modecache
from .campaign.budget import SKIP_REASON, Ledger
from .campaign.notes import campaign_notes
from .campaign.writer import Campaign, append_step_summary
from .run.models import ModelEntry
from .run.sandbox import UNCONFINED_NOTE
from .verdicts.gates import GATE_FAILED_EXIT, GateConfig
from .session import SANDBOX_ERROR, AgenticSession
from .campaign.summary import cost_rows, folded_tables, mode_rows, overall_lines, score_rows
from .campaign.economy import economy_rows
from .campaign.frontier import AXES, points as frontier_points, sentences as frontier_sentences
from .telemetry import process as telemetry
from .terminal import TerminalView
from .verdicts.wiring import Verdicts


#: Options left out of the printed resume command: a resume takes the campaign's own tasks (a ``-m`` or ``-k``
#: that narrowed the session that stopped would narrow the resume again), and names its folder itself.
_NOT_RESUMED = ("--agentic-resume", "-m", "-k")


def resume_command(folder: Path, invocation: tuple[str, ...] | list[str], cwd: Path) -> str:
    """The command that finishes the campaign in ``folder``, as a shell runs it pasted from anywhere: in the folder
    the session was started from, its arguments less the task selection, ``--agentic-resume=FOLDER`` (with ``=``:
    pytest refuses a separate existing path outside the rootdir)."""
    import shlex

    from .campaign.resume import option_text

    args: list[str] = []
    skip = False
    for arg in map(str, invocation):
        if skip:
            skip = False
            continue
        if arg in _NOT_RESUMED:
            skip = True
            continue
        if arg.startswith(("--agentic-resume=", "-m", "-k")):  # -mEXPR, -kEXPR: the value attached
            continue
        args.append(arg)
    return " ".join(["cd", shlex.quote(str(cwd.resolve())), "&&", "pytest", *map(shlex.quote, args),
                     option_text(folder.resolve())])


def resume_note(folder: Path, in_flight: int, invocation: tuple[str, ...] | list[str], cwd: Path,
                missing: int | None = None) -> str:
    """What an incomplete campaign's summary, page and terminal say: why, and the command that finishes it."""
    why = (f"{missing} of its runs are not recorded yet (this session ran part of it)" if missing is not None else
           f"the session stopped (Ctrl-C, SIGTERM, -x or an error) with {in_flight} run(s) in flight, which are "
           "not recorded")
    return (f"The campaign is INCOMPLETE: {why}. Resume it (only the missing runs run): "
            f"{resume_command(folder, invocation, cwd)}")


def prepare_the_end(cleanup: Callable[[], None] | None = None) -> threading.Thread:
    """Do now, on a thread, what the end of the session would: import scipy (the tables' intervals and
    the design's power), the report's modules and its template, then ``cleanup`` (pytest's removal of
    older temporary directories, ``internals.older_temp_dirs_cleanup``).

    Called at the first report, once the runs are going: this work then overlaps the calls in flight,
    and the end of the session is left with writing the files. A failure here is left to the end,
    which meets it again (imports, and pytest's own cleanup) and reports it.
    """

    def imports() -> None:
        try:
            import scipy.optimize  # noqa: F401
            import scipy.stats  # noqa: F401

            from .report import render

            render.warm()
            if cleanup is not None:
                cleanup()
        except Exception:  # noqa: BLE001 - the end of the session does it again and says what failed
            pass

    thread = threading.Thread(target=imports, name="agentic-prepare-end", daemon=True)
    thread.start()
    return thread


class EntryCheck:
    """``findings`` on a thread of its own (xdist's controller: it overlaps the workers' start-up)."""

    def __init__(self, findings: Callable[[], list[Any]]) -> None:
        self._found: list[Any] = []
        self._error: BaseException | None = None

        def target() -> None:
            try:
                self._found = findings()
            except BaseException as exc:  # noqa: BLE001 - raised where the result is read
                self._error = exc

        # Not a daemon: a thread frozen mid-import at exit would hold the import lock the shutdown needs.
        self.thread = threading.Thread(target=target, name="agentic-entry-check")
        self.thread.start()

    def result(self) -> list[Any]:
        self.thread.join()
        if self._error is not None:
            raise self._error
        return self._found


class Controller:
    def __init__(self, session: AgenticSession) -> None:
        self.session = session
        self.campaign = Campaign(session)
        #: Runs announced by their setup report and not yet finished, by node id.
        self.running: dict[str, outcome.StartedRun] = {}
        #: Items whose test is over (their teardown was reported), to tell whether ``-x`` cut anything.
        self.finished_items: set[str] = set()
        #: Runs skipped because the campaign budget was spent.
        self.budget_skipped = 0
        #: The thread preparing the end of the session (``prepare_the_end``), started at the first report.
        self.end_thread: threading.Thread | None = None
        if session.budget is not None:
            session.ledger = Ledger.create()
        self.verdicts = self.verdicts_of(session)
        self.campaign.verdicts = self.verdicts
        #: Failed tests that are not judged agent runs (setup errors, harness errors, plain tests).
        self.other_failures = 0
        #: Local model servers started for this session, and their logs.
        self.servers: list = []
        self.server_logs: list[Path] = []
        #: Why the session ran nothing (an xdist worker found no sandbox), or None.
        self.stopped_for: str | None = None
        #: xdist's local workers, by process id (told of a SIGTERM the controller alone received).
        self.worker_pids: list[int] = []
        #: Under xdist, the entry check running while the workers start (``EntryCheck``), until it is read.
        self.entry_check: EntryCheck | None = None
        #: Why report.html could not be written (said in the terminal), or None.
        self.report_error: str | None = None
        session.config.pluginmanager.register(
            TerminalView(session, self.campaign, lambda: self._agentic_session(session.config)), "agentic-terminal")
        if session.config.getoption("htmlpath", None):
            from .htmlreport import HtmlRows

            session.config.pluginmanager.register(HtmlRows(session.config, self.campaign), "agentic-html-rows")

    @staticmethod
    def verdicts_of(session: AgenticSession) -> Verdicts:
        """The session's comparison, predictions, rescore and gates, as the command line asks."""
        config = session.config
        gate_config = GateConfig(
            min_pass_rate=options.option(config, options.MIN_PASS_RATE),
            min_lower_bound=options.option(config, options.MIN_LOWER_BOUND),
            fail_on_regression=options.option(config, options.FAIL_ON_REGRESSION),
            max_infra_errors=options.option(config, options.MAX_INFRA_ERRORS),
            gate_only=options.option(config, options.GATE_ONLY),
        )
        return Verdicts(gate_config, compare_path=options.option(config, options.COMPARE),
                        predictions_path=options.option(config, options.PREDICTIONS), replay=session.replay)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: hand the controller's state to each worker (called only when xdist runs)."""
        workerinput = internals.node_worker_input(node)
        if self.session.ledger is not None:
            workerinput["agentic_ledger"] = str(self.session.ledger.path)
        workerinput["agentic_api_bases"] = dict(self.session.api_bases)
        workerinput["agentic_paths"] = {"models": str(self.session.models_path), "out": str(self.session.out_dir)}
        traced = telemetry.worker_input(self.session)
        if traced is not None:
            workerinput[telemetry.WORKER_KEY] = traced

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodeready(self, node: Any) -> None:
        """xdist: a local worker's process id, to pass a SIGTERM or Ctrl-C on (``pytest_keyboard_interrupt``)."""
        pid = internals.node_worker_pid(node)
        if pid is not None:
            self.worker_pids.append(pid)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C or SIGTERM reached this process alone (``kill PID``, not the process group): the
        workers are told too, so they stop now instead of after xdist's ten-second wait for them."""
        for pid in self.worker_pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: a worker that found no sandbox ran nothing; the controller says why, once."""
        self.stopped_for = self.stopped_for or internals.node_worker_output(node).get(SANDBOX_ERROR)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.entry_check is not None:  # a session stopped before its loop: the thread may be mid-import
            self.entry_check.thread.join()
        self.stop_servers()
        if self.session.ledger is not None:
            self.session.ledger.remove()

    def _agentic_session(self, config: pytest.Config) -> bool:
        return (bool(self.session.model_names) or self.session.models_path.is_file()
                or self.session.replay is not None)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        if not self._agentic_session(config):
            return []
        names = ", ".join(e.name for e in self.session.selected_models())
        return [f"agentic: models {names}; {self.session.runs} runs per task; seed {self.session.seed}; "
                f"models file {self.session.models_path}",
                # What a reader must know of a model before its first run (the embedded one: a smoke test, how long).
                *(f"agentic: model {e.name!r}: {e.caveat}" for e in self.session.selected_models() if e.caveat),
                *([f"agentic: {UNCONFINED_NOTE}"] if self.session.sandbox_choice == "none" else [])]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = session.config
        if config.option.collectonly or not self._agentic_session(config):
            return
        self.session.check_environment()
        self.verdicts.check([e.name for e in self.session.selected_models()])
        # Under xdist the controller collects nothing: it asks litellm now, before its workers start. Else at
        # ``pytest_collection_finish``, litellm's import (``llm.preload_in_background``) overlapping collection.
        distributed = config.pluginmanager.has_plugin("dsession")
        if distributed and not any(e.server for e in self.session.selected_models()):
            # No server to start first: litellm's import (seconds of CPU) overlaps the workers' own start
            # instead of delaying it; what it finds stops the session before an item is dealt (``pytest_runtestloop``,
            # where the session's end still runs and closes the telemetry started here).
            telemetry.start_session(self.session)  # before xdist's workers: they are handed its context
            self.entry_check = EntryCheck(self.findings)
            return
        if distributed:
            self.check_entries(endpoints=False)
        telemetry.start_session(self.session)  # before xdist's workers: they are handed its context
        self.start_servers()
        if distributed:
            self.check_entries(endpoints=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """xdist's controller: the entry check started at session start has ended before its loop deals an item."""
        if self.entry_check is not None:
            check, self.entry_check = self.entry_check, None
            self.say(check.result())

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from .run.task import task_spec_of

        if not session.config.option.collectonly and any(task_spec_of(item) for item in session.items):
            self.check_entries(endpoints=False)
            self.check_entries(endpoints=True)

    def check_entries(self, *, endpoints: bool) -> None:
        """What litellm says of each selected entry (its provider, its parameters), or, once its server is up,
        what its endpoint says (reachable, serving the model named): errors stop the session, warnings are said."""
        self.say(self.findings(entries=not endpoints, endpoints=endpoints))

    def findings(self, *, entries: bool = True, endpoints: bool = True) -> list[Any]:
        """``startcheck``'s findings for the selected entries (litellm's word on each, then its endpoint's)."""
        if self.session.replay is not None or all(e.scripted for e in self.session.selected_models()):
            return []
        from .run.calls import startcheck

        path, found, models = self.session.models_path, [], self.session.selected_models()
        if entries:
            cache = getattr(self.session.config, "cache", None)
            found += [f for entry in models for f in startcheck.check_entry_remembered(path, entry, cache)]
        if endpoints:
            for entry in models:
                api_base = self.session.api_base(entry)
                if api_base:
                    key = os.environ.get(entry.api_key_env, "") if entry.api_key_env else None
                    found += startcheck.endpoint_findings(path, entry, api_base, key,
                                                          "api_base_env" if entry.api_base_env else "api_base")
        return found

    def say(self, found: list[Any]) -> None:
        """Stop the session on the findings' errors (``UsageError``), or write their warnings."""
        errors = list(dict.fromkeys(f.message for f in found if f.error))
        if errors:
            self.stop_servers()
            # The preload thread may still be importing (its warm-up call): a daemon thread frozen at exit
            # while it holds the import lock hangs the interpreter's shutdown. It ends first.
            from .run.calls import llm

            llm.wait_for_preload()
            raise pytest.UsageError("\n".join(errors))
        writer = self.session.config.pluginmanager.get_plugin("terminalreporter")
        for message in dict.fromkeys(f.message for f in found):
            if writer is not None:
                writer.write_line(f"agentic: warning: {message}", yellow=True)

    def start_servers(self) -> None:
        """Start each selected entry's local server once per session (before xdist starts workers)."""
        from .outcome import safe_name
        from .servers.config import with_slots
        from .servers.lifecycle import ServerStartError, preflight, start

        entries = [(e, e.server) for e in self.session.selected_models() if e.server]
        # The variants of one entry share its server (they differ in call parameters only).
        shared: dict[str, list[tuple[ModelEntry, Mapping[str, Any]]]] = {}
        for e, config in entries:
            shared.setdefault(e.variant_of or e.name, []).append((e, config))
        try:
            for entry, config in entries:
                preflight(entry.name, config)
            for group in shared.values():
                entry, config = group[0]
                # Logged outside the out folder while xdist workers start (a path appearing there changes how
                # pytest picks their rootdir from the command line); moved into the campaign folder at the end.
                log = Path(tempfile.mkdtemp(prefix="agentic-server-")) / f"server-{safe_name(entry.name)}.log"
                self.server_logs.append(log)
                server = start(entry.name, with_slots(config, sum(self.in_flight(e) for e, _ in group)), log)
                self.servers.append(server)
                for e, _ in group:
                    self.session.api_bases[e.name] = server.api_base
                    self.campaign.servers[e.name] = {"kind": config["kind"], "api_base": server.api_base,
                                                     "pid": server.pid, "log": log.name}
        except (ServerStartError, ValueError) as exc:
            self.stop_servers()
            raise pytest.UsageError(f"{self.session.models_path}: {exc}") from None

    def in_flight(self, entry: ModelEntry) -> int:
        """The most runs of ``entry`` this session has in flight at once, over all its processes."""
        option = self.session.config.option
        workers = getattr(option, "numprocesses", None) if getattr(option, "dist", "no") != "no" else None
        concurrency = self.session.concurrency or 1  # a llama.cpp server's runs are not adaptive
        per_process = min(concurrency, entry.max_concurrency or concurrency)
        return per_process * (workers if isinstance(workers, int) and workers > 0 else 1)

    def stop_servers(self) -> None:
        while self.servers:
            self.servers.pop().stop()

    def keep_server_logs(self) -> None:
        if self.campaign.path is None:
            return
        for log in self.server_logs:
            if log.exists():
                shutil.move(str(log), self.campaign.path / log.name)
                shutil.rmtree(log.parent, ignore_errors=True)
        self.server_logs.clear()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.end_thread is None:
            self.end_thread = prepare_the_end(internals.older_temp_dirs_cleanup(self.session.config))
        self.campaign.pacing.add(getattr(report, scheduler.PACING_ATTR, None))
        tasks = getattr(report, outcome.TASKS_ATTR, None)
        if tasks:
            self.campaign.select_tasks(list(tasks))
        if report.when == "teardown":
            self.finished_items.add(report.nodeid)
        announced = outcome.started_of(report)
        if announced is not None:
            self.running[report.nodeid] = announced
            return
        record = outcome.record_of(report)
        if record is not None:
            self.running.pop(report.nodeid, None)
            self.campaign.add(record, outcome.transcript_of(report))
        elif report.skipped and SKIP_REASON in str(report.longrepr):
            self.budget_skipped += 1
        elif report.when == "???" and report.nodeid in self.running:
            # xdist's report for an item whose worker died: the run is kept, as an infra error
            # (the machine's fault, never the model's).
            cause = str(report.longrepr).strip().splitlines()[0] if report.longrepr else "worker crashed"
            self.campaign.add(*outcome.lost(self.running.pop(report.nodeid), cause))
        elif report.failed:
            self.other_failures += 1

    @pytest.hookimpl(tryfirst=True)  # before xdist's, which waits 0.2 to 0.4 s for its workers to exit
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.end_thread is not None:
            self.end_thread.join()  # a daemon thread frozen at exit holding the import lock hangs the shutdown
        if self.stopped_for or (exitstatus == pytest.ExitCode.USAGE_ERROR and not self.running
                                and not self.campaign.added):
            # Stopped at start (no sandbox, a refused resume): nothing ran, and a resumed folder stays as it was.
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            self.stop_servers()
            return
        # -x stops the session through shouldfail (a cut only if an item was left), Ctrl-C and the like
        # through shouldstop.
        cut = session.shouldstop or (session.shouldfail and len(self.finished_items) < session.testscollected)
        complete = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and not cut
        missing = None
        plan = self.session.resumed.plan() if self.session.resumed is not None else None
        if plan is not None and not cut and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED,
                                                            pytest.ExitCode.NO_TESTS_COLLECTED):
            # A resume is complete when the campaign has every run, whatever part of it this session ran.
            missing = len(plan - {(r["model"], r["task"], r["run"]) for r in self.campaign.records})
            complete = not missing
        if not complete and self.running and not self.stopped_for:
            # Stopped (Ctrl-C, SIGTERM) before any run finished: the folder still says so, and how to resume.
            self.campaign.ensure_folder()
        self.campaign.notes = self.notes()
        if not complete and self.campaign.path is not None:
            invocation = session.config.invocation_params
            self.campaign.notes.append(resume_note(self.campaign.path, len(self.running), invocation.args,
                                                   invocation.dir, missing or None))
        self.campaign.budget_skipped = self.budget_skipped
        self.campaign.pacing.add(scheduler.pacing_news(session.config))  # this process's last news
        if self.campaign.path is not None:
            # The gates may change the exit status; pytest returns session.exitstatus as set here.
            session.exitstatus = self.verdicts.evaluate(self.campaign.records, exitstatus, self.other_failures,
                                                        self.campaign.path.name, self.campaign.written_by())
        self.stop_servers()  # every run is over: no process is left behind
        self.keep_server_logs()
        self.campaign.finish(complete=complete)
        if self.campaign.path is not None:
            append_step_summary(self.campaign.path)  # under GitHub Actions: the job's summary page
        self.verdicts.keep_inputs(self.campaign.path)
        self.write_report()
        modecache.remember(session.config, self.campaign.records)
        telemetry.end_session(self.session, self.campaign, session.exitstatus)

    def write_report(self) -> None:
        """report.html, last: it reads back the folder the other artefacts were written to."""
        if self.campaign.path is None:
            return
        from .report import write_campaign

        try:
            write_campaign(self.campaign.path, self.verdicts)
        except Exception as exc:  # the campaign is written; a failed page must not hide it
            self.report_error = f"{type(exc).__name__}: {exc}"

    def notes(self) -> list[str]:
        """What a reader must know about this campaign beyond the tables."""
        caveats = {}
        if self.session.models_path.is_file():
            caveats = {name: e.caveat for name, e in self.session.registry.entries.items()}
        return [*self.campaign.session_notes(), *self.verdicts.notes(self.campaign.records),
                *campaign_notes(self.campaign.records, caveats, self.budget_skipped, self.session.budget,
                                unconfined=self.session.sandbox_choice == "none")]

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """The campaign, top down: the verdict (score, interval, gates), the tables, then where everything is."""
        campaign = self.campaign
        if self.stopped_for:
            terminalreporter.write_line(f"ERROR: {self.stopped_for}", red=True)
            return
        if campaign.path is None:
            return
        records = sorted(campaign.records, key=lambda r: (r["model"], r["task"], r["run"]))
        tr = terminalreporter
        tr.section("agentic campaign")
        for line in overall_lines(records):
            tr.write_line(line, bold=True)
        sections = self.verdicts.sections(records)
        for title, body in sections:
            if title == "CI gates":
                tr.write_line("CI gates:", bold=True)
                failed_gate = self.verdicts.final_exitstatus == GATE_FAILED_EXIT
                for line in body.rstrip("\n").splitlines():
                    tr.write_line(line, red=failed_gate and "FAIL" in line)
        if not campaign.complete:
            tr.write_line("campaign INCOMPLETE: the session stopped early; the finished runs are kept", red=True)
        modes = mode_rows(records)
        # Each table fits 120 columns, or is folded into several that do (the row's model and task repeated).
        for rows, columns in [(score_rows(records, max(self.session.runs, 1)), None),
                              (modes, ["model", "failure_mode", "count", "answer_format"]),
                              (cost_rows(records), None), (economy_rows(records, overall_only=True), None)]:
            for table in folded_tables(rows, columns) if rows or columns is None else []:
                tr.write_line("")
                for line in table.splitlines():
                    tr.write_line(line)
        for axis in AXES:
            for line in frontier_sentences(frontier_points(records), axis):
                tr.write_line(line)
        for note in campaign.notes:
            tr.write_line(note, yellow=True)
        for title, body in sections:
            if title != "CI gates":
                tr.write_line("")
                tr.write_line(f"{title}:", bold=True)
                for line in body.rstrip("\n").splitlines():
                    tr.write_line(line)
        tr.write_line("")
        tr.write_line(f"campaign written to {campaign.path}")
        if self.report_error:
            tr.write_line(f"report.html NOT written: {self.report_error}", red=True)
        elif (campaign.path / "report.html").is_file():
            tr.write_line(f"report: {(campaign.path / 'report.html').resolve().as_uri()}")
        failed = sum(not r["passed"] for r in records)
        if failed:
            tr.write_line(f"failed runs: {failed}; their transcripts are under {campaign.path / 'transcripts'}")
