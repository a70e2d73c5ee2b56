"""What one pytest process does with traces and litellm callbacks, from the session's start to its end.

The controller (the only process without xdist) opens the session span at ``pytest_sessionstart`` and
closes it, with the campaign's id, at ``pytest_sessionfinish``; it hands its context to each xdist
worker (``workerinput``). Every process that calls models installs the callbacks (and litellm's
OpenTelemetry integration, when tracing) before its first run and, after its last, waits for litellm's
logging threads, removes them and, in a worker, sends its spans. Every function here costs nothing
when neither tracing nor a callback is asked for, and then imports nothing of OpenTelemetry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .. import internals, options
from ..run.records import RunRecord
from ..run.task import BENCHMARK_REVISION
from .settings import TelemetryError, TraceSettings, trace_settings

#: The key of ``workerinput`` that carries the session span's context and the tracing settings.
WORKER_KEY = "agentic_trace"


@dataclass
class Telemetry:
    """One process's tracer (None: not tracing) and the callbacks it installed in litellm."""

    tracing: Any = None
    installed: Any = None


def _settings(config: pytest.Config) -> TraceSettings | None:
    try:
        return trace_settings(bool(options.option(config, options.OTEL)),
                              bool(options.option(config, options.OTEL_CONTENT)))
    except TelemetryError as exc:
        raise pytest.UsageError(str(exc)) from None


def _tracing(settings: TraceSettings, secrets: list[str]) -> Any:
    try:
        from .traces import Tracing
    except ImportError as exc:
        raise pytest.UsageError(f"{settings.why} asks for OpenTelemetry traces, and OpenTelemetry's SDK is not "
                                f"installed ({exc.name}): pip install 'pytest-agentic[otel]', or unset "
                                f"{settings.why} (or set OTEL_TRACES_EXPORTER=none)") from None
    try:
        return Tracing(settings, secrets)
    except TelemetryError as exc:
        raise pytest.UsageError(str(exc)) from None


def callback_names(session: Any) -> tuple[tuple[str, ...], str, Path | None]:
    """The callbacks the session installs, where they are named (for errors) and the folder of that file."""
    from_option = tuple(options.option(session.config, options.CALLBACKS) or ())
    if from_option:
        return from_option, "--agentic-callback", None
    if session.models_path.is_file():
        return session.registry.callbacks, f"{session.models_path}: key 'callbacks'", session.models_path.parent
    return (), "", None


def start_session(session: Any) -> None:
    """Controller, ``pytest_sessionstart``: check the callbacks' names; open the session span when tracing."""
    names, where, search = callback_names(session)
    if names:
        from ..run.calls.llm import litellm_module
        from .callbacks import check

        try:
            check(litellm_module(), names, where, search)
        except TelemetryError as exc:
            raise pytest.UsageError(str(exc)) from None
    settings = _settings(session.config)
    if settings is None:
        return
    tracing = _tracing(settings, session.secrets)
    workers = getattr(session.config.option, "numprocesses", None)
    tracing.start_session({
        "agentic.benchmark": "agentic-core-v1", "agentic.benchmark.revision": BENCHMARK_REVISION,
        "agentic.models": [e.name for e in session.selected_models()], "agentic.runs": session.runs,
        "agentic.seed": session.seed, "agentic.xdist_workers": workers if isinstance(workers, int) else None,
        "agentic.shard": f"{session.shard[0]}/{session.shard[1]}" if session.shard else None,
        "agentic.callbacks": list(names) or None,
    })
    session.telemetry = Telemetry(tracing=tracing)


def worker_input(session: Any) -> dict[str, Any] | None:
    """What a worker needs to put its runs in the session's trace, or None when not tracing."""
    tracing = session.telemetry.tracing if session.telemetry is not None else None
    if tracing is None:
        return None
    return {"carrier": tracing.carrier(), "settings": tracing.settings.as_dict()}


def start_process(session: Any) -> None:
    """Before this process's first run: its tracer (a worker's, from the controller's context) and callbacks."""
    if session.telemetry is None:
        session.telemetry = Telemetry()
    telemetry: Telemetry = session.telemetry
    handed = internals.worker_input(session.config).get(WORKER_KEY) if session.is_worker else None
    if handed:
        telemetry.tracing = _tracing(TraceSettings.from_dict(handed["settings"]), session.secrets)
        telemetry.tracing.adopt(handed["carrier"])
    names, where, search = callback_names(session)
    if not _calls_models(session) or (not names and telemetry.tracing is None):
        return
    from ..run.calls.llm import litellm_module
    from .callbacks import Installed, resolve

    litellm = litellm_module()
    try:
        callbacks = resolve(litellm, names, where, search)
    except TelemetryError as exc:
        raise pytest.UsageError(str(exc)) from None
    if telemetry.tracing is not None:
        callbacks.append(telemetry.tracing.model_calls())
    telemetry.installed = Installed(litellm, callbacks)


def _calls_models(session: Any) -> bool:
    """Whether this process may call a model (``AgenticSession.calls_models`` less its preload switch)."""
    config = session.config
    if config.option.collectonly or config.pluginmanager.has_plugin("dsession"):
        return False
    return bool(session.model_names) or session.models_path.is_file() or session.replay is not None


def run_started(session: Any, agent: Any) -> Any:
    """The span of a run about to start (``telemetry.traces.RunTrace``), or None when not tracing."""
    telemetry: Telemetry | None = session.telemetry
    if telemetry is None or telemetry.tracing is None:
        return None
    spec, case = agent.spec, agent.case
    return telemetry.tracing.start_run(f"invoke_agent {spec.id} {case.model} run{case.run}", {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "pytest-agentic",
        "gen_ai.request.model": agent.entry.model, "agentic.task": spec.id, "agentic.task.name": spec.name,
        "agentic.model": case.model, "agentic.run": case.run, "agentic.seed": session.seed,
        "agentic.benchmark.revision": BENCHMARK_REVISION, "agentic.nodeid": agent.item.nodeid,
    })


def run_judged(agent: Any, record: RunRecord) -> None:
    """The run's verdict on its span (a run of this process, judged by its test)."""
    run_trace = getattr(agent, "trace", None)
    if run_trace is not None:
        run_trace.judged(record)


def finish_process(session: Any) -> None:
    """After this process's last run: every call has reached the callbacks, which are removed; a worker
    sends its spans."""
    telemetry: Telemetry | None = session.telemetry
    if telemetry is None:
        return
    if telemetry.installed is not None:
        from .callbacks import drain

        drain()
        telemetry.installed.remove()
        telemetry.installed = None
    if session.is_worker and telemetry.tracing is not None:
        telemetry.tracing.shutdown()
        telemetry.tracing = None


def end_session(session: Any, campaign: Any, exitstatus: int) -> None:
    """Controller, ``pytest_sessionfinish``: close the session span with the campaign's id, send the spans."""
    telemetry: Telemetry | None = session.telemetry
    if telemetry is None or telemetry.tracing is None:
        return
    finish_process(session)  # without xdist this process ran the runs (a no-op when done already)
    records = campaign.records
    telemetry.tracing.end_session({
        "agentic.campaign.id": campaign.path.name if campaign.path is not None else None,
        "agentic.campaign.complete": campaign.complete, "agentic.runs_recorded": len(records),
        "agentic.runs_passed": sum(bool(r["passed"]) for r in records), "pytest.exit_status": int(exitstatus),
    }, failed=int(exitstatus) not in (0, 1, 5))
    telemetry.tracing.shutdown()
    telemetry.tracing = None
