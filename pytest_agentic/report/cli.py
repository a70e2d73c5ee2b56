"""The console scripts that write pages and exports: ``agentic-report``, ``agentic-merge``, ``agentic-export``.

``agentic-report DIR...`` writes report.html for stored campaigns, or one page for several;
``agentic-merge SHARD_DIR...`` merges shard campaigns (``campaign/merge.py``) into one folder
and writes its report.html, as a single machine's session would have.

    agentic-report agentic-results/CAMPAIGN           # CAMPAIGN/report.html
    agentic-report RUN_A RUN_B -o compare.html        # one comparative page of two campaigns
    agentic-report agentic-results/ --each            # each campaign's own report.html
    python -m pytest_agentic.report agentic-results/CAMPAIGN

``agentic-export inspect CAMPAIGN [-o DIR]`` writes the campaign as Inspect AI eval logs, one per
model (``inspect_log.py``), for ``inspect view --log-dir DIR``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..campaign import stored
from ..campaign.merge import MergeError, merge
from .inspect_log import INSPECT_VERSION, export
from .render import REPORT_NAME, Source, write, write_campaign

#: Where a page of several campaigns goes without ``-o``.
DEFAULT_PAGE = "agentic-report.html"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agentic-report",
        description="Write a self-contained HTML report (charts and every transcript) of pytest-agentic "
                    "campaign folders: one campaign's report.html in its folder, or one page for several.")
    stored.add_paths_argument(parser)
    parser.add_argument("-o", "--output", metavar="FILE",
                        help=f"the page to write (default: {REPORT_NAME} in the campaign folder for one "
                             f"campaign, ./{DEFAULT_PAGE} for several)")
    parser.add_argument("--each", action="store_true",
                        help=f"write each campaign's own {REPORT_NAME} in its folder instead of one page")
    parser.add_argument("--title", help="the page's title (default: the campaign id, or the number of campaigns)")
    args = parser.parse_args(argv)
    if args.each and args.output:
        parser.error("--each writes into each campaign folder; it takes no --output")
    try:
        campaigns = list(stored.find(args.paths))
    except stored.CampaignFolderError as exc:
        print(f"agentic-report: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        if args.each:
            written = [write_campaign(c.path) for c in campaigns]
        elif len(campaigns) == 1 and not args.output:
            written = [write([Source(campaigns[0])], campaigns[0].path / REPORT_NAME, args.title)]
        else:
            written = [write([Source(c) for c in campaigns], Path(args.output or DEFAULT_PAGE), args.title)]
    except (stored.CampaignFolderError, OSError) as exc:
        print(f"agentic-report: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    for path in written:
        print(f"agentic-report: wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    print(f"agentic-report: {len(campaigns)} campaign(s) in {seconds:.2f} s; open the page in a browser "
          "(no server, no network needed)")
    return 0


def merge_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agentic-merge",
        description="Merge shard campaigns (--agentic-shard K/N) into one campaign folder, with its report.html.")
    parser.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR", help="a shard's campaign folder")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the merged campaign folder is written (default: beside the first shard)")
    args = parser.parse_args(argv)
    try:
        folder = merge(args.shards, args.out or args.shards[0].resolve().parent)
    except MergeError as exc:
        print(f"agentic-merge: {exc}", file=sys.stderr)
        return 2
    print(f"merged {len(args.shards)} shards into {folder}")
    try:
        print(f"agentic-merge: wrote {write_campaign(folder)}")
    except (stored.CampaignFolderError, OSError) as exc:  # the merged campaign stands; its page failed
        print(f"agentic-merge: report.html NOT written: {exc}", file=sys.stderr)
        return 1
    return 0


def export_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="agentic-export",
        description="Export a stored pytest-agentic campaign in another tool's format.")
    formats = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    inspect = formats.add_parser(
        "inspect", help="Inspect AI eval logs, one .eval file per model, for `inspect view`",
        description=f"Write a campaign as Inspect AI eval logs (one .eval file per model; a sample per run, "
                    f"its verdict and failure mode as scores), read by Inspect AI {INSPECT_VERSION}'s "
                    f"`inspect view` and `inspect_ai.log.read_eval_log`. Inspect AI is not needed to export.")
    inspect.add_argument("campaign", metavar="CAMPAIGN", help="a campaign folder (agentic-results/<id>)")
    inspect.add_argument("-o", "--output", metavar="DIR", type=Path,
                         help="the folder the logs go to (default: inspect-logs/ in the campaign folder)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        campaign = stored.load(args.campaign)
        written = export(campaign, args.output or campaign.path / "inspect-logs")
    except (stored.CampaignFolderError, OSError) as exc:
        print(f"agentic-export: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - started
    for path in written:
        print(f"agentic-export: wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    print(f"agentic-export: {len(campaign.records)} run(s) of {len(written)} model(s) in {seconds:.2f} s; "
          f"view them with `inspect view --log-dir {written[0].parent if written else args.output}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
