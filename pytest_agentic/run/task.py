"""How a benchmark task declares itself.

A task module holds a plain pytest test function decorated with :func:`task`.
The decorator names the task and the ``build(seed)`` function that makes one
instance of it: the prompt, the workspace files, the tools offered, what the
checker expects, and the scripted solutions (one reference that must pass,
near-misses that must fail as ``wrong_answer``)::

    from pytest_agentic import Final, TaskInstance, ToolCall, task

    def build(seed: int) -> TaskInstance:
        return TaskInstance(prompt=..., files={...}, tools=("fs_read",),
                            expected={...}, reference=[...], near_misses={...})

    @task("task_42", "my_task", build=build, limits={"max_turns": 10})
    def test_my_task(agent):
        run = agent.run()
        assert "42" in run.final_answer
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import pytest

#: The seed that gives the canonical agentic-core-v1 instance of every task.
CANONICAL_SEED = 0
#: The revision of the agentic-core-v1 tasks, written in campaign.json. It changes with what a
#: model sees or what a checker accepts (the task content hashes tell which tasks changed).
#: 1: the first release; 2: answer contracts stated, tasks 04, 08, 09 judged by the answer's claim,
#: fs_edit and fs_read line ranges offered, tool calls written as text classified (issue 10);
#: 3: tasks 03, 04, 06, 08, 09 and 10 ask for labelled answer lines and judge only those (issue 18);
#: 4: one form rule and one hedge rule for every answer line (run/answerlines.py), stated in the prompts;
#: task_06's lines name rules from a set its prompt defines (closed form), one line only; task_08's
#: injected error answers the read of the old path only; task_10's cause in closed form (CAUSE: a kind
#: of a set, NAMES: schema names); task_02 judges every block of the workspace for copies (issue 24);
#: 5: a judged line holds its value alone: a note on it (brackets, a dash, "or", other words, a bracketed
#: line under it, a footnote) fails as answer_format, whatever it says, and every answer prompt says so;
#: one path is one function (``pkg/__init__.py:quote``) and task_04 has a layout whose strategies are
#: packages (their fee in an ``__init__.py``) (issue 33).
BENCHMARK_REVISION = 5


@dataclass(frozen=True)
class ToolCall:
    """One tool call a scripted model makes."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    #: Raw argument text to send instead of ``json.dumps(arguments)``
    #: (lets a script send arguments that do not parse).
    raw_arguments: str | None = None

    def arguments_json(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(dict(self.arguments), sort_keys=True)


@dataclass(frozen=True)
class Final:
    """The final answer a scripted model gives (an assistant message with no tool call)."""

    content: str


@dataclass(frozen=True)
class ToolFault:
    """An injected tool error that answers one call: the first call of its tool whose ``path``
    argument names ``path`` (any spelling: ``./a/b``, ``a//b``), or the tool's next call when
    ``path`` is None. A call that does not match is run as usual and the fault waits."""

    message: str
    path: str | None = None

    def answers(self, arguments: Mapping[str, Any]) -> bool:
        """Whether this fault answers a call with ``arguments``."""
        if self.path is None:
            return True
        given = arguments.get("path")
        return isinstance(given, str) and posixpath.normpath(given.lstrip("/")) == posixpath.normpath(self.path)


#: One assistant turn of a script: several tool calls at once, one call, or a final answer.
Step = Union[Final, ToolCall, Sequence[ToolCall]]
#: A scripted solution: the assistant turns, in order.
Solution = Sequence[Step]


@dataclass(frozen=True)
class TaskInstance:
    """One concrete instance of a task, made by the task's ``build(seed)``."""

    #: The user message that states the task.
    prompt: str
    #: Workspace content, relative POSIX path -> text (str) or bytes.
    files: Mapping[str, str | bytes]
    #: Names of the tools offered to the model (see ``pytest_agentic.run.tools``).
    tools: Sequence[str]
    #: Whatever the checker needs (expected answer, original file content, ...).
    expected: Mapping[str, Any] = field(default_factory=dict)
    #: The tool calls and final answer of a correct agent: must pass.
    reference: Solution = ()
    #: Plausible wrong solutions, by name: each must fail as ``wrong_answer``.
    near_misses: Mapping[str, Solution] = field(default_factory=dict)
    #: Tool behaviours injected for this instance, e.g. the first call of a tool failing.
    #: Maps tool name -> the errors returned by its first calls, in order: a message (the next call
    #: fails) or a :class:`ToolFault` (the first call naming its path fails: the error follows from
    #: the call it answers).
    tool_faults: Mapping[str, Sequence[str | ToolFault]] = field(default_factory=dict)
    #: An optional system prompt appended to the harness's own.
    system: str = ""

    def content_hash(self) -> str:
        """A stable hash of what the model sees and the checker expects (computed once: every run of
        a campaign's instance records it, and the instance is not changed after ``build``)."""
        cached = self.__dict__.get("_content_hash")
        if cached is None:
            cached = self._hash()
            object.__setattr__(self, "_content_hash", cached)
        return str(cached)

    def _hash(self) -> str:
        h = hashlib.sha256()
        h.update(self.prompt.encode())
        for path in sorted(self.files):
            data = self.files[path]
            h.update(path.encode())
            h.update(data if isinstance(data, bytes) else data.encode())
        h.update(json.dumps(list(self.tools)).encode())
        # What the model is told about each tool is part of what it sees.
        from .tools import TOOLS

        h.update(json.dumps([TOOLS[t].schema() if t in TOOLS else t for t in self.tools], sort_keys=True).encode())
        h.update(json.dumps(self.expected, sort_keys=True, default=str).encode())
        if self.tool_faults:  # since revision 4: the injected errors are part of what the model sees
            h.update(json.dumps({t: [f if isinstance(f, str) else [f.message, f.path] for f in faults]
                                 for t, faults in sorted(self.tool_faults.items())}).encode())
        return h.hexdigest()


@dataclass(frozen=True)
class TaskSpec:
    """What the :func:`task` decorator records on a test function."""

    id: str
    name: str
    build: Callable[[int], TaskInstance]
    limits: Mapping[str, Any] = field(default_factory=dict)
    description: str = ""
    #: Whether a run executes code the model wrote (a ``run_tests`` tool, a checker's probe or suite):
    #: a session that selects such a task needs the sandbox (``run.sandbox``).
    runs_model_code: bool = False


MARKER = "agentic_task"


def task(
    id: str,
    name: str,
    *,
    build: Callable[[int], TaskInstance],
    limits: Mapping[str, Any] | None = None,
    runs_model_code: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare a test function as an agent task.

    The plugin parametrizes the test over the selected models and runs, marks
    it with ``id`` (so ``pytest -m task_07`` selects it), and hands it the
    ``agent`` fixture set up for this task. ``runs_model_code`` declares that the task's tools or
    checker execute code the model wrote (they then run in the sandbox, and a session selecting the
    task stops at start when no sandbox can be made).
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        spec = TaskSpec(
            id=id,
            name=name,
            build=build,
            limits=dict(limits or {}),
            description=(fn.__doc__ or "").strip(),
            runs_model_code=runs_model_code,
        )
        return pytest.mark.agentic_task(spec)(fn)

    return decorate


def task_spec_of(item_or_definition: Any) -> TaskSpec | None:
    """The :class:`TaskSpec` of a collected item or function definition, if any."""
    marker = item_or_definition.get_closest_marker(MARKER)
    if marker is None:
        return None
    spec = marker.args[0] if marker.args else None
    if not isinstance(spec, TaskSpec):
        raise TypeError(
            f"{getattr(item_or_definition, 'nodeid', item_or_definition)}: "
            "@pytest.mark.agentic_task needs a TaskSpec; use pytest_agentic.task(...)"
        )
    return spec
