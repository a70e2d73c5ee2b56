"""Shared helpers of the self-tests: drive scripted solutions through the real agent loop."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from pytest_agentic.run.agent import run_agent
from pytest_agentic.run.limits import Limits
from pytest_agentic.run.models import ModelEntry
from pytest_agentic.run.records import RunResult
from pytest_agentic.run import scripted
from pytest_agentic.run.task import Final, Solution, TaskInstance
from pytest_agentic.run.tools import Workspace, get_tools

ROOT = Path(__file__).resolve().parent.parent
SCRIPTED = ModelEntry(name="scripted", model="agentic-scripted/oracle", price={"input_per_token": 0.0,
                                                                                "output_per_token": 0.0})


def play(instance: TaskInstance, solution: Solution, root: Path, limits: Limits | None = None) -> RunResult:
    """Run ``solution`` as a scripted model through litellm and the agent loop."""
    workspace = Workspace(root)
    workspace.populate(instance.files)
    key = scripted.register(solution)
    try:
        return run_agent(
            entry=SCRIPTED, api_base=None, prompt=instance.prompt, system=instance.system,
            workspace=workspace, tools=get_tools(list(instance.tools)), limits=limits or Limits(),
            metadata={scripted.METADATA_KEY: key},
            faults={k: list(v) for k, v in instance.tool_faults.items()},
        )
    finally:
        scripted.unregister(key)


@functools.cache
def load_task_module(path: Path) -> ModuleType:
    """Import a task module from its file (once), registered so its dataclasses resolve."""
    spec = importlib.util.spec_from_file_location(f"_agentic_task_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def campaign_dir(out: Path) -> Path:
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1, f"expected one campaign folder in {out}, found {folders}"
    return folders[0]


def runs(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]


#: Ways to write the answer lines, taken in turn by the corpora: every one must read the same.
LINE_STYLES = [
    lambda k, v: f"{k}: {v}",
    lambda k, v: f"**{k}:** {v}",
    lambda k, v: f"{k}: `{v}`",
    lambda k, v: f"- {k.lower()}: {v}",
    lambda k, v: f"> {k.title()}: {v}.",
    lambda k, v: f"**{k}: {v}**",
    lambda k, v: f"### {k}: {v}",
    lambda k, v: f"{k.lower()} :  {v}",
    lambda k, v: f"1. `{k}:` {v}",
    lambda k, v: f"_{k}_: {v}",
    lambda k, v: f"{k} - {v}",  # the separator may be a colon, a dash or an equals sign
    lambda k, v: f"**{k}** = {v}",
    lambda k, v: f"- {k} \u2014 `{v}`",
]


def lines(values: dict[str, object], style: int = 0) -> str:
    """Answer lines for ``values`` (label -> value) in one of :data:`LINE_STYLES`; every third style in a code block."""
    text = "\n".join(LINE_STYLES[style % len(LINE_STYLES)](k, v) for k, v in values.items())
    return f"```\n{text}\n```" if style % 3 == 2 else text


def think(body: str) -> str:
    """``body`` as a reasoning block, before the answer."""
    return f"<think>\n{body}\n</think>\n\n"


def steps(inst) -> list:
    """The reference's tool calls (its investigation), without its final answer."""
    return [s for s in inst.reference if not isinstance(s, Final)]


def restate(inst, cases: dict[str, tuple[str, dict[str, object] | None]]) -> dict[str, list]:
    """The reference's investigation closed by each case's prose and its answer lines, styles taken in turn
    (no lines: the prose alone)."""
    return {name: [*steps(inst), Final(f"{prose}\n\n{lines(values, i)}".strip() if values else prose)]
            for i, (name, (prose, values)) in enumerate(cases.items())}


def close(inst, texts: dict[str, str], values: dict[str, object]) -> dict[str, list]:
    """The reference's investigation closed by each of ``texts`` and the same answer lines (styles in turn)."""
    return restate(inst, {name: (text, values) for name, text in texts.items()})


def out_of_form(good: dict[str, list], bad: dict[str, list], noted: tuple[str, ...] = (),
                renamed: tuple[str, ...] = ()) -> tuple[dict[str, list], dict[str, list]]:
    """A corpus restated for revision 5, where a judged line holds its value alone: the correct answers
    ``noted`` (whose lines carry a note, or words beyond the value's form) become wrong ones that must fail
    as ``answer_format`` (``format_<name>``), and so do the wrong ones ``renamed`` (a hedge or a figure set
    aside in a note, once judged by what the note said: now out of form, whatever it says). A name a seed's
    corpus lacks is skipped."""
    good, bad = dict(good), dict(bad)
    for name in noted:
        if name in good:
            solution = good.pop(name)
            bad[f"format_{name}"] = solution
            twin = without_notes(solution[-1].content)
            if twin != solution[-1].content:  # words beyond the value's form (no note syntax) have no twin
                good[f"{name}/note_dropped"] = [*solution[:-1], Final(twin)]
    for name in renamed:
        if name in bad:
            bad[f"format_{name}"] = bad.pop(name)
    return good, bad


_JUDGED = re.compile(r"(?im)^((?:[^\w\n]|_|\d{1,2}[.)])*(?:answer|value|function|query|cause|names|assumption|question)[\s*_`]*"
                     r"(?::|=|--?|\u2014|\u2013)[ \t]*)(.*)$")


def without_notes(text: str) -> str:
    """A reply with the notes of its answer lines dropped (in brackets, after a spaced dash, a bracketed line right
    under one, a footnote mark): the twin of a revision-4 answer that revision 5 reads as out of form."""
    def value(m: re.Match[str]) -> str:
        v = re.sub(r"\s*\((?:[^()]|\([^()]*\))*\)|\s*\[[^\]]*\]|\s+(?:--?|\u2014|\u2013)\s+.*$", "", m.group(2))
        return m.group(1) + v
    text = _JUDGED.sub(value, text)
    return re.sub(r"(?im)(^[^\w\n]*(?:answer|value|function|query|cause|names|assumption|question)\W.*)\n[ \t>*-]*[(\[][^\n]*$",
                  r"\1", text)
