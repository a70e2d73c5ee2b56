"""The ``agent`` fixture: runs the model on the task, in a fresh workspace."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as StillRunning
from pathlib import Path
from typing import Any

import pytest

from .run import scripted
from .run.agent import run_bounded
from .campaign.budget import skip_message
from .run.limits import Limits
from .run.models import ModelEntry
from .run.records import RunResult
from .run.redact import redact
from .session import Case, AgenticSession
from .telemetry import process
from .run.task import Solution, TaskInstance, TaskSpec
from .run.tools import Workspace, get_tools

RESULT_KEY = pytest.StashKey[RunResult]()
CONTEXT_KEY = pytest.StashKey["Agent"]()


class Agent:
    """What a task test gets: its instance, its workspace, and :meth:`run`."""

    def __init__(self, session: AgenticSession, item: pytest.Item, spec: TaskSpec, case: Case, root: Path) -> None:
        self.session = session
        self.item = item
        self.spec = spec
        self.case = case
        self.entry: ModelEntry = session.entry(case.model)
        self.instance: TaskInstance = session.instance(spec)
        where = f"task {spec.id}"
        self.limits = Limits().merged(spec.limits, where).merged(self.entry.limits, f"model {self.entry.name!r}")
        self.workspace = Workspace(root, tool_timeout=self.limits.tool_timeout_s)
        self.workspace.populate(self.instance.files)
        self.result: RunResult | None = None
        #: The run started ahead of the test under --agentic-concurrency (see ``scheduler``).
        self.future: Future[RunResult] | None = None
        #: Set instead of a run when the campaign budget was spent before the run could start.
        self.budget_skip: str | None = None
        self._script: Solution | None = None
        #: The run's span (``telemetry.traces.RunTrace``) when the session exports traces, else None.
        self.trace: Any = None

    @property
    def model(self) -> str:
        return self.case.model

    @property
    def run_index(self) -> int:
        return self.case.run

    def script(self) -> Solution | None:
        """What a scripted model plays (read once, in the thread that prepares the run)."""
        if self.entry.scripted and self._script is None:
            self._script = self.session.script(self.spec, self.case, self.entry, self.instance)
        return self._script

    def execute(self, should_stop: Callable[[], bool] | None = None,
                poll: Callable[[], None] | None = None) -> RunResult:
        """The agent loop, once, in this thread or a pool's, bounded from outside by the run's
        ``max_seconds`` (``run_bounded``); its cost goes to the ledger at once."""
        key = None
        metadata: dict[str, Any] = {"agentic_task": self.spec.id, "agentic_run": self.case.run}
        self.trace = process.run_started(self.session, self)
        traced: dict[str, Any] = {}
        if self.trace is not None:
            metadata.update(self.trace.metadata())
            traced["on_tool_call"] = self.trace.tool_call
        script = self.script()
        if script is not None:
            key = scripted.register(script)
            metadata[scripted.METADATA_KEY] = key
        try:
            result = run_bounded(
                entry=self.entry,
                api_base=self.session.api_base(self.entry),
                prompt=self.instance.prompt,
                system=self.instance.system,
                workspace=self.workspace,
                tools=get_tools(list(self.instance.tools)),
                limits=self.limits,
                metadata=metadata,
                faults={k: list(v) for k, v in self.instance.tool_faults.items()},
                should_stop=should_stop,
                poll=poll,
                **traced,
            )
        finally:
            if key:
                scripted.unregister(key)
        if self.session.ledger is not None:
            self.session.ledger.add(result.cost_usd)
        _redact_in_place(result, self.session.secrets)
        return result

    def run(self) -> RunResult:
        """Run the agent once; fails the test when the run did not reach a final answer.

        Under ``--agentic-concurrency`` the run was started ahead of the test: this waits for it.
        """
        if self.result is not None:
            raise RuntimeError("agent.run() was already called for this run; each run starts clean")
        result = self._wait() if self.future is not None else self.execute()
        self.result = result
        self.item.stash[RESULT_KEY] = result
        if result.infra_error is not None:
            pytest.fail(f"infra_error: the model call failed: {result.infra_error}", pytrace=False)
        if result.tool_call_as_text is not None:
            pytest.fail(f"the final message is a tool call written as text ({result.tool_call_as_text}), not an "
                        "answer: the endpoint did not parse it as a tool call", pytrace=False)
        if result.final_answer is None:
            pytest.fail(f"the run ended without a final answer (stop reason: {result.stop_reason}, "
                        f"{result.turns} turns, {len(result.tool_calls)} tool calls)", pytrace=False)
        return result


    def _wait(self) -> RunResult:
        """The run started ahead; while it runs, the scheduler starts more if the model's limit grew."""
        assert self.future is not None
        while True:
            try:
                return self.future.result(timeout=0.1)
            except StillRunning:
                if self.session.scheduler is not None:
                    self.session.scheduler.refill()


def _redact_in_place(result: RunResult, secrets: list[str]) -> None:
    """Mask credentials in what the run produced, before checker, records or transcripts see it."""
    if not secrets:
        return
    result.messages = redact(result.messages, secrets)
    result.tool_calls = redact(result.tool_calls, secrets)
    result.final_answer = redact(result.final_answer, secrets)
    result.infra_error = redact(result.infra_error, secrets)


def make_agent(request: pytest.FixtureRequest, case: Case) -> Agent:
    """The item's run: the one the scheduler started ahead, else a new one in the test's ``tmp_path``.

    ``tmp_path`` is asked for only then: pytest numbers it by listing its base folder, a cost
    that grows with every run of the session.
    """
    from .session import SESSION_KEY
    from .run.task import task_spec_of

    spec = task_spec_of(request.node)
    assert spec is not None, "pytest_generate_tests refuses agent tests without @pytest_agentic.task"
    session = request.config.stash[SESSION_KEY]
    # A run started ahead (--agentic-concurrency) is judged whatever the budget says now: it was
    # started before the budget was spent, and a finished run is never dropped.
    agent = session.scheduler.claim(request.node) if session.scheduler is not None else None
    if agent is None:
        budget_skip = spent_message(session)
        if budget_skip:
            pytest.skip(budget_skip)
        agent = Agent(session, request.node, spec, case, request.getfixturevalue("tmp_path") / "workspace")
    elif agent.budget_skip:
        pytest.skip(agent.budget_skip)
    request.node.stash[CONTEXT_KEY] = agent
    return agent


def spent_message(session: AgenticSession) -> str | None:
    """Why no further run may start (the campaign budget is spent), or None."""
    if session.budget is not None and session.ledger is not None:
        spent = session.ledger.spent()
        if spent >= session.budget:
            return skip_message(session.budget, spent)
    return None
