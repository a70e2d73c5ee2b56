"""The ``agent`` fixture: runs the model on the task, in a fresh workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from .run import scripted
from .run.agent import run_agent
from .campaign.budget import skip_message
from .run.limits import Limits
from .run.models import ModelEntry
from .run.records import RunResult
from .run.redact import redact
from .session import Case, AgenticSession
from .run.task import TaskInstance, TaskSpec
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

    @property
    def model(self) -> str:
        return self.case.model

    @property
    def run_index(self) -> int:
        return self.case.run

    def run(self) -> RunResult:
        """Run the agent once; fails the test when the run did not reach a final answer."""
        if self.result is not None:
            raise RuntimeError("agent.run() was already called for this run; each run starts clean")
        key = None
        metadata = {"agentic_task": self.spec.id, "agentic_run": self.case.run}
        if self.entry.scripted:
            key = scripted.register(self.session.script(self.spec, self.case, self.entry, self.instance))
            metadata[scripted.METADATA_KEY] = key
        try:
            result = run_agent(
                entry=self.entry,
                api_base=self.session.api_base(self.entry),
                prompt=self.instance.prompt,
                system=self.instance.system,
                workspace=self.workspace,
                tools=get_tools(list(self.instance.tools)),
                limits=self.limits,
                metadata=metadata,
                faults={k: list(v) for k, v in self.instance.tool_faults.items()},
            )
        finally:
            if key:
                scripted.unregister(key)
        if self.session.ledger is not None:
            self.session.ledger.add(result.cost_usd)
        _redact_in_place(result, self.session.secrets)
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


def _redact_in_place(result: RunResult, secrets: list[str]) -> None:
    """Mask credentials in what the run produced, before checker, records or transcripts see it."""
    if not secrets:
        return
    result.messages = redact(result.messages, secrets)
    result.tool_calls = redact(result.tool_calls, secrets)
    result.final_answer = redact(result.final_answer, secrets)
    result.infra_error = redact(result.infra_error, secrets)


def make_agent(request: pytest.FixtureRequest, case: Case, tmp_path: Path) -> Agent:
    from .session import SESSION_KEY
    from .run.task import task_spec_of

    spec = task_spec_of(request.node)
    assert spec is not None, "pytest_generate_tests refuses agent tests without @pytest_agentic.task"
    session = request.config.stash[SESSION_KEY]
    if session.budget is not None and session.ledger is not None:
        spent = session.ledger.spent()
        if spent >= session.budget:
            pytest.skip(skip_message(session.budget, spent))
    agent = Agent(session, request.node, spec, case, tmp_path / "workspace")
    request.node.stash[CONTEXT_KEY] = agent
    return agent
