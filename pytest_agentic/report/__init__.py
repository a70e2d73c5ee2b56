"""The campaign report: one self-contained HTML page (charts and every transcript) per campaign or several.

Imported by the integration (the controller writes ``report.html`` with the other artefacts) and
by its console script, ``agentic-report`` (``cli.py``).
"""

from .render import REPORT_NAME, Source, page, write, write_campaign
from .views import run_id

__all__ = ["REPORT_NAME", "Source", "page", "run_id", "write", "write_campaign"]
