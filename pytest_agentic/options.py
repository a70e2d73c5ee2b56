"""Command-line options and ini values, in one group with one prefix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args

import pytest

MODEL = "agentic_models"
RUNS = "agentic_runs"
MODELS_FILE = "agentic_models_file"
OUT = "agentic_out"
SEED = "agentic_seed"
RESUME = "agentic_resume"
BUDGET = "agentic_budget"
COMPARE = "agentic_compare"
MIN_PASS_RATE = "agentic_min_pass_rate"
MIN_LOWER_BOUND = "agentic_min_lower_bound"
FAIL_ON_REGRESSION = "agentic_fail_on_regression"
MAX_INFRA_ERRORS = "agentic_max_infra_errors"
GATE_ONLY = "agentic_gate_only"
RESCORE = "agentic_rescore"
PREDICTIONS = "agentic_predictions"
CONCURRENCY = "agentic_concurrency"
SHARD = "agentic_shard"
TB = "agentic_tb"
SANDBOX = "agentic_sandbox"
OTEL = "agentic_otel"
OTEL_CONTENT = "agentic_otel_content"
CALLBACKS = "agentic_callbacks"

#: --agentic-tb: how a failed agent run is reported (a few lines, or pytest's traceback of the checker).
TracebackChoice = Literal["concise", "full"]
FULL_TRACEBACK: TracebackChoice = "full"

#: What --agentic-sandbox accepts (the names of run.sandbox.CHOICES, kept here so --help imports nothing).
SANDBOX_CHOICES = ("auto", "bubblewrap", "none")

DEFAULT_RUNS = 3


def _whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        import argparse

        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {minimum} or more, got {value}")
        return value

    return parse


_positive_int = _whole_number(1)
_seed = _count = _whole_number(0)


def _budget(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected dollars as a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected more than 0, got {text}")
    return value


def _fraction(text: str) -> float:
    """A rate: 0.6, or 60%."""
    import argparse

    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a rate such as 0.6 or 60%, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a rate between 0 and 1 (or 0% and 100%), got {text!r}")
    return value


def _shard(text: str) -> tuple[int, int]:
    """``K/N``: the K-th of N shards, 1 <= K <= N."""
    import argparse

    k, sep, n = text.partition("/")
    try:
        index, count = int(k), int(n)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected K/N such as 2/3, got {text!r}") from None
    if not sep or count < 1 or not 1 <= index <= count:
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, got {text!r}")
    return index, count


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
                         "(runs lost to infra errors are run again); its models, tasks, runs and seed are the "
                         "campaign's, and a session naming others stops at start")
    group.addoption("--agentic-budget", dest=BUDGET, type=_budget, default=None, metavar="USD",
                    help="campaign cost budget in dollars: once spent, the remaining runs are skipped")
    group.addoption("--agentic-compare", dest=COMPARE, default=None, metavar="PATH",
                    help="an earlier campaign folder: add a per-task then/now table and say whether the overall "
                         "change is beyond noise (paired by task: sign-flip permutation test, alpha 0.05)")
    group.addoption("--agentic-predictions", dest=PREDICTIONS, default=None, metavar="FILE.yaml",
                    help="predictions written before the campaign, scored after it (format: docs/comparing.md, Predictions)")
    group.addoption("--agentic-rescore", dest=RESCORE, default=None, metavar="PATH",
                    help="re-judge a stored campaign with the current checkers by replaying its recorded tool "
                         "calls; no model is called")
    group.addoption("--agentic-concurrency", dest=CONCURRENCY, type=_positive_int, default=None, metavar="N",
                    help="the most agent runs of a model in flight at once in each pytest process, started "
                         "ahead of the test bodies, which still judge them in order; 1: sequential (default: "
                         "adaptive per model reached over HTTP, 1 for scripted and llama.cpp models; ini "
                         "agentic_concurrency)")
    group.addoption("--agentic-shard", dest=SHARD, type=_shard, default=None, metavar="K/N",
                    help="run the K-th of N balanced shards of the campaign's runs (merge the shard "
                         "campaigns with agentic-merge)")
    group.addoption("--agentic-tb", dest=TB, choices=get_args(TracebackChoice), default=None,
                    help="how a failed agent run is reported: 'concise' (a few lines: model, task, run, failure "
                         "mode, reason, answer excerpt, transcript) or 'full' (pytest's traceback of the checker); "
                         "default: concise unless --tb=long|short|native or -vv")
    group.addoption("--agentic-sandbox", dest=SANDBOX, choices=SANDBOX_CHOICES, default=None,
                    help="how model-written code (run_tests, the checkers' probes) is contained: bubblewrap, "
                         "auto (bubblewrap; the session stops at start when it cannot be made) or none (runs "
                         "UNCONFINED, and every artefact says so); default auto, ini agentic_sandbox")
    group.addoption("--agentic-otel", dest=OTEL, action="store_true", default=False,
                    help="export the campaign as OpenTelemetry traces (OTLP; endpoint, headers and protocol from "
                         "the standard OTEL_EXPORTER_OTLP_* variables, default http://localhost:4318); on by "
                         "itself when OTEL_EXPORTER_OTLP_ENDPOINT is set; needs pytest-agentic[otel]")
    group.addoption("--agentic-otel-content", dest=OTEL_CONTENT, action="store_true", default=False,
                    help="put prompts, completions, tool arguments and tool results in the trace's spans (they "
                         "can hold secrets; OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true does the same)")
    group.addoption("--agentic-callback", dest=CALLBACKS, action="append", default=[], metavar="NAME",
                    help="a litellm callback that receives every model call (repeatable; replaces models.yaml's "
                         "'callbacks'): a litellm integration (langfuse, mlflow, datadog, ...) or module:Class of "
                         "a litellm CustomLogger; credentials come from its environment variables")
    gates = parser.getgroup("agentic gates", "CI gates on the campaign (pytest-agentic); a failed gate exits 6")
    gates.addoption("--agentic-min-pass-rate", dest=MIN_PASS_RATE, type=_fraction, default=None, metavar="X",
                    help="fail when a model's overall pass rate is under X (0.6 or 60%%)")
    gates.addoption("--agentic-min-lower-bound", dest=MIN_LOWER_BOUND, type=_fraction, default=None, metavar="X",
                    help="fail when the lower end of a model's overall pass rate's 95%% interval, clustered "
                         "by task, is under X")
    gates.addoption("--agentic-fail-on-regression", dest=FAIL_ON_REGRESSION, action="store_true", default=False,
                    help="with --agentic-compare: fail when a model's pass rate dropped beyond noise")
    gates.addoption("--agentic-max-infra-errors", dest=MAX_INFRA_ERRORS, type=_count, default=None, metavar="N",
                    help="fail when more than N runs were lost to infra errors")
    gates.addoption("--agentic-gate-only", dest=GATE_ONLY, action="store_true", default=False,
                    help="the exit status follows the gates only: failed agent runs (model failures) do not "
                         "make the session fail; other failed tests still do, and so do infra errors unless "
                         "--agentic-max-infra-errors bounds them")
    parser.addini("agentic_runs", "default runs per task and model", default=str(DEFAULT_RUNS))
    parser.addini("agentic_concurrency", "cap on a model's agent runs in flight per pytest process "
                  "(empty: adaptive)", default="")
    parser.addini("agentic_sandbox", "how model-written code is contained: auto, bubblewrap or none", default="auto")


def whole_number_ini(config: pytest.Config, name: str, minimum: int) -> int:
    """An ini value that must be a whole number of at least ``minimum``, named when it is not."""
    import argparse

    try:
        return _whole_number(minimum)(config.getini(name))
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"ini option {name}: {exc}") from None


def optional_whole_number_ini(config: pytest.Config, name: str, minimum: int) -> int | None:
    """Like ``whole_number_ini``, None when the ini value is empty (not set)."""
    return whole_number_ini(config, name, minimum) if str(config.getini(name)).strip() else None


def sandbox_choice(config: pytest.Config) -> str:
    """--agentic-sandbox, else the ini value, which must be one of SANDBOX_CHOICES."""
    value = config.getoption(SANDBOX) or str(config.getini("agentic_sandbox")).strip()
    if value not in SANDBOX_CHOICES:
        raise pytest.UsageError(f"ini option agentic_sandbox: expected one of {', '.join(SANDBOX_CHOICES)}, "
                                f"got {value!r}")
    return value


def option(config: pytest.Config, name: str) -> Any:
    return config.getoption(name)


#: Options whose value is a path (pytest may mistake a separate existing path for a test path).
PATH_OPTIONS = ("--agentic-out", "--models-file", "--agentic-resume", "--agentic-compare", "--agentic-rescore",
                "--agentic-predictions")


def check_rootdir(config: pytest.Config) -> None:
    """Stop when pytest may have picked its rootdir from one of our option values.

    pytest picks the rootdir before plugins add their options, so in
    ``--agentic-out /elsewhere`` an existing ``/elsewhere`` counts as a test path,
    and the search for the project's ini file starts above the project: its
    settings and models.yaml are then not found. ``--agentic-out=/elsewhere`` is safe.
    """
    args = [str(a) for a in config.invocation_params.args]
    if any(a in ("--rootdir", "-c", "--config-file") or a.startswith(("--rootdir=", "--config-file=")) for a in args):
        return
    invocation = config.invocation_params.dir.resolve()
    for i, arg in enumerate(args[:-1]):
        value = args[i + 1]
        if arg not in PATH_OPTIONS:
            continue
        path = (invocation / value).resolve()
        if path.exists() and path != invocation and invocation not in path.parents:
            raise pytest.UsageError(
                f"{arg} {value}: pytest takes an existing path given this way for a test path when it picks "
                f"the rootdir (here {config.rootpath}), and may miss the project's ini file; "
                f"write it as {arg}={value}"
            )
