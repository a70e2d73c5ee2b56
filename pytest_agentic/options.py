"""Command-line options and ini values, in one group with one prefix."""

from __future__ import annotations

from typing import Any

import pytest

MODEL = "agentic_models"
RUNS = "agentic_runs"
MODELS_FILE = "agentic_models_file"
OUT = "agentic_out"
SEED = "agentic_seed"
RESUME = "agentic_resume"
BUDGET = "agentic_budget"

DEFAULT_RUNS = 3


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def _seed(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def _budget(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected dollars as a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected more than 0, got {text}")
    return value


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentic", "agent evaluation (pytest-agentic)")
    group.addoption("--model", dest=MODEL, action="append", default=[], metavar="NAME",
                    help="model entry of models.yaml to evaluate (repeatable; 'all' for every real entry; "
                         "default: the file's 'default')")
    group.addoption("--runs", dest=RUNS, type=_positive_int, default=None, metavar="N",
                    help=f"runs per task and model (default {DEFAULT_RUNS})")
    group.addoption("--models-file", dest=MODELS_FILE, default=None, metavar="PATH",
                    help="the models file (default: models.yaml in the rootdir)")
    group.addoption("--agentic-out", dest=OUT, default=None, metavar="DIR",
                    help="where campaign folders are written (default: agentic-results/ in the rootdir)")
    group.addoption("--agentic-seed", dest=SEED, type=_seed, default=None, metavar="N",
                    help="seed of the task instances (default 0: the canonical agentic-core-v1 instances)")
    group.addoption("--agentic-resume", dest=RESUME, default=None, metavar="CAMPAIGN_DIR",
                    help="continue an incomplete campaign in its folder: run only what it lacks "
                         "(runs lost to infra errors are run again)")
    group.addoption("--agentic-budget", dest=BUDGET, type=_budget, default=None, metavar="USD",
                    help="campaign cost budget in dollars: once spent, the remaining runs are skipped")
    parser.addini("agentic_runs", "default runs per task and model", default=str(DEFAULT_RUNS))


def option(config: pytest.Config, name: str) -> Any:
    return config.getoption(name)
