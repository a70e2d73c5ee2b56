"""pytest hooks of pytest-agentic; each delegates to the module that owns the concept."""

from __future__ import annotations

import signal
import sys
from collections.abc import Generator

import pytest

from . import markers, options, outcome
from . import scheduler, selection
from .campaign import modecache
from .controller import Controller
from .fixture import CONTEXT_KEY, Agent, make_agent
from .session import SESSION_KEY, AgenticSession, Case, restore_sigterm, sigterm_as_interrupt
from .run.calls import llm, route
from .run.task import task_spec_of
from .telemetry import process as telemetry
from .validate import validate_instance
from .workers import hooks as worker_hooks


SIGTERM_KEY = pytest.StashKey["signal.Handlers | None"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    if getattr(sys.excepthook, "__module__", None) == __package__:  # pytest handles Ctrl-C from here on
        sys.excepthook = sys.__excepthook__  # (the package's start-up hook: pytest_agentic/__init__.py)
    markers.register(config)
    session = AgenticSession(config)
    config.stash[SESSION_KEY] = session
    config.stash[SIGTERM_KEY] = sigterm_as_interrupt()
    worker_hooks.register(config)  # xdist's hooks, only where xdist is installed and enabled
    if not session.is_worker:
        options.check_rootdir(config)
        config.pluginmanager.register(Controller(session), "agentic-controller")


def pytest_unconfigure(config: pytest.Config) -> None:
    restore_sigterm(config.stash.get(SIGTERM_KEY, None))
    route.release()  # the call route's switch, where this process set it (``AgenticSession.take_call_route``)


def pytest_sessionstart(session: pytest.Session) -> None:
    llm.quiet_import_noise()  # here, outside pytest's warning contexts: see its docstring


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "agentic_case" not in metafunc.fixturenames:
        return
    spec = task_spec_of(metafunc.definition)
    if spec is None:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: uses the 'agent' fixture but is not declared with "
            "@pytest_agentic.task(...)"
        )
    session = metafunc.config.stash[SESSION_KEY]
    if session.calls_models():
        # litellm's import (seconds) overlaps the rest of collection; benchmarks/concurrency.py measures it.
        session.take_call_route()  # before the warm-up call, which takes the route
        llm.preload_in_background(warm_up=session.calls_endpoints())
    validate_instance(spec, session)
    cases = session.cases(spec)
    metafunc.parametrize("agentic_case", cases, ids=[f"{c.model}-run{c.run}" for c in cases])


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: markers must be in place before -m deselects.
    session = config.stash[SESSION_KEY]
    for item in items:
        spec = task_spec_of(item)
        if spec is not None:
            markers.ensure(config, spec.id, f"agent task {spec.name}")
            item.add_marker(spec.id)
    # Shards split the whole campaign (before resume), so every shard sees the same split.
    selection.deselect_other_shards(config, items, session.shard)
    selection.deselect_finished(config, items, session.resume_done())
    modecache.mark_items(config, items)
    markers.check_expression(config, items)
    if session.replay is not None:
        selection.deselect_unrecorded(config, items)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    # After every deselection (only the tasks that will run decide whether a sandbox is needed), and
    # before xdist's worker reports what it collected.
    agentic = session.config.stash[SESSION_KEY]
    selection.note_selection(agentic, session)
    if not session.config.option.collectonly:
        agentic.check_sandbox(session)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    llm.wait_for_preload()
    agentic = session.config.stash[SESSION_KEY]
    telemetry.start_process(agentic)  # after the warm-up call, before the first run
    prefetcher = scheduler.start(session)
    try:
        return (yield)
    finally:
        scheduler.finish(session, prefetcher)
        telemetry.finish_process(agentic)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    session = item.config.stash[SESSION_KEY]
    if session.scheduler is not None:
        session.scheduler.top_up(item, nextitem)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    session = item.config.stash[SESSION_KEY]
    if report.when == "setup" and report.passed:
        announced = outcome.started(item)
        if announced is not None:
            setattr(report, outcome.STARTED_ATTR, announced)
            setattr(report, outcome.IN_FLIGHT_ATTR, scheduler.in_flight(session, True))
            if session.selected_tasks is not None:  # once per process: the campaign's tasks, for its manifest
                setattr(report, outcome.TASKS_ATTR, session.selected_tasks)
                session.selected_tasks = None
    elif report.when == "call":
        built = outcome.build(item, report)
        if built is not None:
            record, transcript = built
            replay = session.replay
            if replay is not None:
                replay.annotate(record, transcript)
            setattr(report, outcome.RECORD_ATTR, record)
            telemetry.run_judged(item.stash.get(CONTEXT_KEY, None), record)
            setattr(report, outcome.TRANSCRIPT_ATTR, transcript)
            setattr(report, outcome.IN_FLIGHT_ATTR, scheduler.in_flight(session, False))
            setattr(report, scheduler.PACING_ATTR, scheduler.pacing_news(item.config))
            item.user_properties.extend(outcome.junit_properties(record))
            outcome.make_printable(report)
    return report


@pytest.fixture
def agentic_case() -> Case:
    """The (model, run) of an agent test; set by the plugin's parametrization."""
    raise pytest.UsageError("agentic_case is set by the plugin for tests declared with @pytest_agentic.task")


@pytest.fixture
def agent(request: pytest.FixtureRequest, agentic_case: Case) -> Agent:
    """Runs the model on this task, in a fresh workspace; see :class:`pytest_agentic.fixture.Agent`."""
    return make_agent(request, agentic_case)
