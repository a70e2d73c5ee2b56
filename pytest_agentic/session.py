"""Session state shared by the hooks and the fixture, in every process."""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from . import internals, options
from .campaign.budget import Ledger
from .campaign.resume import Asked, Resumed
from .run import sandbox
from .run.models import ModelEntry, ModelsFileError, Registry, load_registry
from .verdicts.rescore import Replay, RescoreError
from .run.task import BENCHMARK_REVISION, CANONICAL_SEED, Solution, TaskInstance, TaskSpec

SESSION_KEY = pytest.StashKey["AgenticSession"]()
#: The key of an xdist worker's output that carries why the session cannot run (no sandbox, a refused resume).
SANDBOX_ERROR = "agentic_sandbox_error"


def sigterm_as_interrupt() -> signal.Handlers | None:
    """SIGTERM (a CI or Slurm time limit, ``kill``) handled like Ctrl-C: pytest stops at once, and the
    controller writes what finished, marked incomplete, with how to resume. Installed in every process
    (controller and xdist workers) whose SIGTERM still has Python's default; returns the handler
    to put back (None when nothing was installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None  # someone else's handler: left as it is
    signal.signal(signal.SIGTERM, _interrupt)
    return signal.SIG_DFL


def _interrupt(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")


def restore_sigterm(previous: signal.Handlers | None) -> None:
    if previous is not None and threading.current_thread() is threading.main_thread():
        if signal.getsignal(signal.SIGTERM) is _interrupt:
            signal.signal(signal.SIGTERM, previous)


@dataclass(frozen=True)
class Case:
    """One (model, run) of a task: the parameter of an agent test."""

    model: str
    run: int


class AgenticSession:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.is_worker = internals.is_worker(config)
        self.model_names: list[str] = options.option(config, options.MODEL)
        runs = options.option(config, options.RUNS)
        # The ini value is held to what --runs accepts: one run at least.
        self.runs: int = runs if runs is not None else options.whole_number_ini(config, "agentic_runs", 1)
        concurrency = options.option(config, options.CONCURRENCY)
        #: The cap on each model's runs in flight in this process (``--agentic-concurrency``, ini
        #: ``agentic_concurrency``); 1 runs each in its test; None: adaptive up to ``run.calls.limiter.CAP``
        #: for models reached over HTTP, 1 for scripted models and llama.cpp servers (``scheduler.pacing_of``).
        self.concurrency: int | None = (concurrency if concurrency is not None
                                        else options.optional_whole_number_ini(config, "agentic_concurrency", 1))
        #: How model-written code is contained (``--agentic-sandbox``); set for this process's tools and checkers.
        choice = options.sandbox_choice(config)  # one of sandbox.CHOICES (checked there)
        self.sandbox_choice: sandbox.SandboxChoice = next(c for c in sandbox.CHOICES if c == choice)
        sandbox.configure(self.sandbox_choice)
        #: (K, N) under ``--agentic-shard K/N``.
        self.shard: tuple[int, int] | None = options.option(config, options.SHARD)
        #: The runs started ahead of their tests (``scheduler.Prefetcher``), set in the process running items.
        self.scheduler: Any = None
        #: This process's OpenTelemetry tracer and litellm callbacks (``telemetry.process.Telemetry``), or None.
        self.telemetry: Any = None
        seed = options.option(config, options.SEED)
        self.seed: int = CANONICAL_SEED if seed is None else seed
        models_file = options.option(config, options.MODELS_FILE)
        self.models_path = Path(models_file) if models_file else config.rootpath / "models.yaml"
        out = options.option(config, options.OUT)
        self.out_dir = Path(out) if out else config.rootpath / "agentic-results"
        # xdist workers use the controller's paths, whatever rootdir they worked out themselves.
        paths = internals.worker_input(config).get("agentic_paths")
        if paths:
            self.models_path, self.out_dir = Path(paths["models"]), Path(paths["out"])
        self._registry: Registry | None = None
        self._selected: list[ModelEntry] | None = None
        self._instances: dict[tuple[str, int], TaskInstance] = {}
        self._secrets: list[str] | None = None
        resume = options.option(config, options.RESUME)
        self.resume_dir: Path | None = Path(resume) if resume else None
        #: The tasks this process's collection selected (set at collection's end; sent once to the controller).
        self.selected_tasks: list[str] | None = None
        self.budget: float | None = options.option(config, options.BUDGET)
        ledger = internals.worker_input(config).get("agentic_ledger")
        #: Set by the controller (or from workerinput) when a budget is given.
        self.ledger: Ledger | None = Ledger(Path(ledger)) if ledger else None
        #: Endpoint per model entry, for entries served by a local server.
        self.api_bases: dict[str, str] = dict(internals.worker_input(config).get("agentic_api_bases", {}))
        #: Under --agentic-rescore: the stored campaign whose runs are replayed instead of calling a model.
        self.replay: Replay | None = None
        rescore = options.option(config, options.RESCORE)
        if rescore:
            try:
                self.replay = Replay(rescore)
                self.replay.restrict(self.model_names)
            except RescoreError as exc:
                raise pytest.UsageError(str(exc)) from None
            if seed is not None and seed != self.replay.seed:
                raise pytest.UsageError(f"--agentic-seed {seed}: the rescored campaign {self.replay.id} ran seed "
                                        f"{self.replay.seed}; a rescore replays the same instances")
            self.seed = self.replay.seed
            self.runs = self.replay.runs
        #: Under --agentic-resume: the campaign continued; its models, runs and seed are this session's.
        self.resumed: Resumed | None = None
        if self.resume_dir is not None and self.replay is None:
            self.resumed = self._resume(self.resume_dir, runs, seed)

    def _resume(self, folder: Path, runs: int | None, seed: int | None) -> Resumed:
        """The campaign to continue: what the command line leaves out is taken from it, what it names must agree."""
        resumed = Resumed.read(folder)
        asked_models = [e.name for e in self.selected_models()] if self.model_names else None
        entries = {name: self.registry.entries[name].public() for name in resumed.models
                   if name in self.registry.entries}
        resumed.check(Asked(models=asked_models, runs=runs, seed=seed, shard=self.shard, revision=BENCHMARK_REVISION,
                            entries=entries))
        if not self.model_names:
            self.model_names = list(resumed.models)
        if runs is None and resumed.runs is not None:
            self.runs = resumed.runs
        if seed is None and resumed.seed is not None:
            self.seed = resumed.seed
        return resumed

    # -- models -------------------------------------------------------------
    @property
    def registry(self) -> Registry:
        if self._registry is None:
            try:
                self._registry = load_registry(self.models_path)
            except ModelsFileError as exc:
                raise pytest.UsageError(str(exc)) from None
        return self._registry

    def selected_models(self) -> list[ModelEntry]:
        if self._selected is None and self.replay is not None:
            self._selected = list(self.replay.entries.values())
        if self._selected is None:
            try:
                self._selected = self.registry.select(self.model_names)
            except ModelsFileError as exc:
                raise pytest.UsageError(str(exc)) from None
            if not self._selected:
                raise pytest.UsageError(f"{self.models_path}: no model selected (pass --model NAME)")
        return self._selected

    @property
    def secrets(self) -> list[str]:
        """Credential values to keep out of every artefact (read from the environment once)."""
        if self._secrets is None:
            from .run.redact import secret_values

            names: list[str] = []
            if self.models_path.is_file() or self.model_names:
                for entry in self.selected_models():
                    names += [*entry.required_env, *filter(None, [entry.api_key_env])]
            self._secrets = secret_values(names)
        return self._secrets

    def entry(self, name: str) -> ModelEntry:
        if self.replay is not None:
            return self.replay.entries[name]
        return self.registry.entries[name]

    def api_base(self, entry: ModelEntry) -> str | None:
        if entry.name in self.api_bases:
            return self.api_bases[entry.name]
        if entry.api_base_env:
            return os.environ.get(entry.api_base_env) or None
        return entry.api_base

    def check_environment(self) -> None:
        """Fail once, before any run, when a selected model lacks its credentials."""
        problems = []
        for entry in self.selected_models():
            missing = entry.missing_env()
            if missing:
                problems.append(f"model {entry.name!r} ({self.models_path}) needs environment variable(s) "
                                f"{', '.join(missing)}, which are not set")
        if problems:
            raise pytest.UsageError("\n".join(problems))

    def check_sandbox(self, session: pytest.Session) -> None:
        """Stop before the first run, with one line, when a selected task runs model code and no sandbox
        can be made. An xdist worker runs nothing and hands the line to the controller, which says it."""
        from .run.task import task_spec_of

        needing = sorted({s.id for item in session.items if (s := task_spec_of(item)) and s.runs_model_code})
        if not needing:
            return
        try:
            sandbox.current()
        except sandbox.SandboxUnavailable as exc:
            self.stop(session, f"{', '.join(needing)}: {exc}")

    def sandbox_info(self) -> dict[str, Any]:
        """campaign.json's ``sandbox``: the choice, and the box model code ran in (kind None: none was needed)."""
        found = sandbox.select("none") if self.sandbox_choice == "none" else sandbox.available()
        if isinstance(found, str):
            return {"choice": self.sandbox_choice, "kind": None, "version": None, "unavailable": found}
        return {"choice": self.sandbox_choice, **found.info()}

    def resume_done(self) -> set[tuple[str, str, int]]:
        """(model, task, run) already finished in the campaign being resumed."""
        return self.resumed.done() if self.resumed is not None else set()

    def stop(self, session: pytest.Session, message: str) -> None:
        """Stop before the first run with ``message``: a ``UsageError``; an xdist worker runs nothing and hands the
        message to the controller, which says it and exits 4."""
        if not self.is_worker:
            # litellm's preload thread may still be importing: a daemon thread frozen at exit while it holds
            # the import lock hangs the interpreter's shutdown (as the start-up checks found), so it ends first.
            from .run.calls import llm

            llm.wait_for_preload()
            raise pytest.UsageError(message)
        internals.set_worker_output(self.config, SANDBOX_ERROR, message)
        session.items.clear()

    def calls_models(self) -> bool:
        """Whether this process will call a model (so litellm is worth importing early)."""
        config = self.config
        if config.option.collectonly or config.pluginmanager.has_plugin("dsession"):
            return False  # collect-only, or the xdist controller: its workers make the calls
        if os.environ.get("AGENTIC_PRELOAD", "1") == "0":
            return False
        return bool(self.model_names) or self.models_path.is_file() or self.replay is not None

    def calls_endpoints(self) -> bool:
        """Whether a model of this session answers over HTTP (not only scripted ones, not a rescore)."""
        return self.replay is None and any(not e.scripted for e in self.selected_models())

    # -- tasks --------------------------------------------------------------
    def cases(self, spec: TaskSpec | None = None) -> list[Case]:
        if self.replay is not None and spec is not None:
            return [Case(model, run) for model, run in self.replay.cases(spec.id)]
        return [Case(e.name, run) for e in self.selected_models() for run in range(1, self.runs + 1)]

    def script(self, spec: TaskSpec, case: Case, entry: ModelEntry, instance: TaskInstance) -> Solution:
        """What a scripted model plays for this run: the recorded turns under a rescore, else its script."""
        from .run import scripted

        if self.replay is not None:
            return self.replay.solution(spec.id, case.model, case.run)
        return scripted.script_for(entry.model, instance, case.run)

    def instance(self, spec: TaskSpec) -> TaskInstance:
        key = (spec.id, self.seed)
        if key not in self._instances:
            self._instances[key] = spec.build(self.seed)
        return self._instances[key]

    def call_route(self) -> str | None:
        """The transport this session's ``openai/`` calls take (``run.calls.route``); None when no model answers over HTTP."""
        if not self.calls_endpoints():
            return None
        from .run.calls import route

        if route.SWITCH in os.environ:  # the user's, or taken already in this process
            return route.current()
        return route.choose((e, self.api_base(e)) for e in self.selected_models() if not e.scripted)

    def take_call_route(self) -> None:
        """Set this process's transport for ``openai/`` calls before litellm's warm-up call (``run.calls.route``)."""
        chosen = self.call_route()
        if chosen is not None:
            from .run.calls import route

            route.take(chosen)

    def describe(self) -> dict[str, Any]:
        described = {
            "models_file": str(self.models_path),
            "models": [e.public() for e in self.selected_models()],
            "runs": self.runs,
            "seed": self.seed,
            "concurrency": self.concurrency,
            "sandbox": self.sandbox_info(),
            "call_route": self.call_route(),
        }
        if self.shard is not None:
            described["shard"] = {"index": self.shard[0], "count": self.shard[1]}
        from .telemetry.process import callback_names

        described["callbacks"] = list(callback_names(self)[0])  # names only: credentials stay in the environment
        if self.replay is not None:
            described.update(self.replay.describe())
        return described
