"""Hooks that run in the controller process only (the only process that writes)."""

from __future__ import annotations

import pytest

from . import modecache, outcome
from .campaign import Campaign
from .session import AgenticSession
from .summary import cost_rows, markdown_table, mode_rows, score_rows


class Controller:
    def __init__(self, session: AgenticSession) -> None:
        self.session = session
        self.campaign = Campaign(session)

    def _agentic_session(self, config: pytest.Config) -> bool:
        return bool(self.session.model_names) or self.session.models_path.is_file()

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        if not self._agentic_session(config):
            return []
        names = ", ".join(e.name for e in self.session.selected_models())
        return [f"agentic: models {names}; {self.session.runs} runs per task; seed {self.session.seed}; "
                f"models file {self.session.models_path}"]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = session.config
        if config.option.collectonly or not self._agentic_session(config):
            return
        self.session.check_environment()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, outcome.RECORD_ATTR, None)
        if record is not None:
            self.campaign.add(record, getattr(report, outcome.TRANSCRIPT_ATTR, None) or {})

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        complete = exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and not session.shouldstop
        self.campaign.finish(complete=complete)
        modecache.remember(session.config, self.campaign.records)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        campaign = self.campaign
        if campaign.path is None:
            return
        records = sorted(campaign.records, key=lambda r: (r["model"], r["task"], r["run"]))
        tr = terminalreporter
        tr.section("agentic campaign")
        for line in markdown_table(score_rows(records, max(self.session.runs, 1))).splitlines():
            tr.write_line(line)
        modes = mode_rows(records)
        if modes:
            tr.write_line("")
            for line in markdown_table(modes, ["model", "failure_mode", "count"]).splitlines():
                tr.write_line(line)
        tr.write_line("")
        for line in markdown_table(cost_rows(records)).splitlines():
            tr.write_line(line)
        if not campaign.complete:
            tr.write_line("campaign INCOMPLETE: the session stopped early; the finished runs are kept", red=True)
        tr.write_line(f"campaign written to {campaign.path}")
