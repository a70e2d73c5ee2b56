"""pytest-html, when the user runs it (``--html``): each agent item's row shows its mode, tags and a link
to its transcript in the campaign's report.html. Registered by the controller only when ``--html`` is given.
"""

from __future__ import annotations

import html
import os
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from . import outcome
from .report import REPORT_NAME, run_id

HEADERS = ("agentic mode", "agentic tags", "transcript")


class HtmlRows:
    """pytest-html's row hooks; the cells are HTML, so every value is escaped here."""

    def __init__(self, config: pytest.Config, campaign: Any) -> None:
        self.campaign = campaign
        # pytest-html resolves its --html path against the working directory, as here.
        html_path = Path.cwd() / Path(os.path.expandvars(config.getoption("htmlpath"))).expanduser()
        self.html_dir = html_path.parent

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.extend(f'<th class="col-agentic">{html.escape(name)}</th>' for name in HEADERS)

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        record = outcome.record_of(report)
        if record is None or self.campaign.path is None:
            cells.extend('<td class="col-agentic"></td>' for _ in HEADERS)
            return
        mode = record["failure_mode"] or "passed"
        tags = ", ".join(f"{k}={v}" for k, v in sorted(record["tags"].items()) if v not in (0, False, None, ""))
        target = os.path.relpath(self.campaign.path / REPORT_NAME, self.html_dir).replace(os.sep, "/")
        href = urllib.parse.quote(target) + "#" + run_id(record["task"], record["run"], record["model"])
        label = f"{record['task']} run{record['run']} {record['model']}"
        cells.extend([
            f'<td class="col-agentic">{html.escape(mode)}</td>',
            f'<td class="col-agentic">{html.escape(tags)}</td>',
            f'<td class="col-agentic"><a href="{html.escape(href)}">{html.escape(label)}</a></td>',
        ])
