"""The README and the docs site hold to the code: the site builds strict, every option is documented,
every command, model name and YAML example shown is checked against the code, and the cheap
commands marked runnable are run."""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentic import options
from pytest_agentic.run.models import ModelEntry, load_registry
from pytest_agentic.verdicts import predictions

from .helpers import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
BIN = Path(sys.executable).parent
#: Words the docs use for "a models.yaml entry of your own" in a command line.
PLACEHOLDER_MODELS = {"X", "NAME", "all"}
#: The info strings of fenced blocks that hold command lines.
SHELL_INFOS = {"", "bash", "console", "shell", "sh"}
#: The HTML comment (invisible on the site) that marks the next fenced block as run by this file.
RUNNABLE = "<!-- runnable: tests/test_docs.py runs these commands -->"

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    info: str
    body: str
    runnable: bool

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        indent = match["indent"]
        body = "".join(line[len(indent):] if line.startswith(indent) else line
                       for line in match["body"].splitlines(keepends=True))
        before = text[:match.start()].rstrip().splitlines()
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match["info"].strip().split(" ")[0],
                           body, bool(before) and before[-1].strip() == RUNNABLE))
    return found


ALL_BLOCKS = [b for page in PAGES for b in blocks(page)]


def commands(block: Block) -> list[list[str]]:
    """The pytest and agentic-* command lines of a shell block, each as its words (chains split at &&)."""
    found = []
    for raw in block.body.splitlines():
        line = raw.strip().removeprefix("$ ")
        if not re.match(r"(pytest|agentic-[a-z]+|apt-get|pip|export|python)\b", line):
            continue  # a comment, or output shown
        words = shlex.split(line, comments=True)
        while words:
            cut = words.index("&&") if "&&" in words else len(words)
            if words[0] == "pytest" or words[0].startswith("agentic-"):
                found.append(words[:cut])
            words = words[cut + 1:]
    return found


def workflow_runs(doc: Any) -> list[tuple[str, dict[str, str]]]:
    """(run text, env names in force) for every step of a GitHub Actions workflow."""
    found = []
    for job in doc.get("jobs", {}).values():
        for step in job.get("steps", []):
            if "run" in step:
                env = {**doc.get("env", {}), **job.get("env", {}), **step.get("env", {})}
                found.append((step["run"], env))
    return found


def all_command_lines() -> list[tuple[str, list[str]]]:
    found = []
    for block in ALL_BLOCKS:
        if block.info in SHELL_INFOS:
            found += [(block.where, words) for words in commands(block)]
        elif block.info == "yaml":
            doc = yaml.safe_load(block.body)
            if isinstance(doc, dict) and "jobs" in doc:
                for run, _ in workflow_runs(doc):
                    found += [(block.where, words) for words in commands(Block(block.page, block.line, "", run,
                                                                             False))]
    return found


@functools.cache
def help_text(program: str) -> str:
    argv = [sys.executable, "-m", "pytest", "--help"] if program == "pytest" else [str(BIN / program), "--help"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{program} --help failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@functools.cache
def registry_entries() -> dict[str, ModelEntry]:
    return dict(load_registry(ROOT / "models.yaml").entries)


def snippet_models() -> dict[str, ModelEntry]:
    """The entries that the docs' own models.yaml examples define (each validated by the registry)."""
    found: dict[str, ModelEntry] = {}
    for block in ALL_BLOCKS:
        if block.info == "yaml" and "models" in (yaml.safe_load(block.body) or {}):
            found.update(load_snippet(block).entries)
    return found


def load_snippet(block: Block, tmp: Path | None = None):
    import tempfile

    folder = Path(tmp or tempfile.mkdtemp())
    path = folder / f"snippet-{block.page.stem}-{block.line}.yaml"
    path.write_text(block.body, encoding="utf-8")
    return load_registry(path)


class _Recorder:
    """Stands in for pytest's parser: records what options.add_options declares."""

    def __init__(self) -> None:
        self.options: list[str] = []
        self.ini: list[str] = []

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.options += names

    def addini(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.ini.append(name)


def declared() -> _Recorder:
    recorder = _Recorder()
    options.add_options(recorder)  # type: ignore[arg-type]
    return recorder


# ---------------------------------------------------------------- the site


def test_site_builds_strict(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    assert (site / "report.png").read_bytes() == (DOCS / "report.png").read_bytes()
    assert 'src="../report.png"' in (site / "results" / "index.html").read_text()
    # ARCHITECTURE.md stays at the top and is included whole in the site.
    architecture = (site / "architecture" / "index.html").read_text()
    for heading in re.findall(r"^## (.+)$", (ROOT / "ARCHITECTURE.md").read_text(), re.M):
        assert heading.split("`")[0].strip() in architecture


def test_every_page_is_in_the_nav():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!", ""))["nav"]
    listed = {page for item in nav for page in item.values()}
    assert listed == {p.name for p in DOCS.glob("*.md")}
    for page in listed:
        assert f"(docs/{page})" in (ROOT / "README.md").read_text() or page in {"index.md", "architecture.md"}, \
            f"README does not link docs/{page}"


# ---------------------------------------------------------------- the option reference


def test_every_option_and_ini_value_is_in_the_reference():
    reference = (DOCS / "reference.md").read_text()
    rows = {m.group(1) for m in re.finditer(r"^\| `([-\w]+)", reference, re.M)}
    recorder = declared()
    assert set(recorder.options) <= rows, f"undocumented options: {sorted(set(recorder.options) - rows)}"
    assert set(recorder.ini) <= rows, f"undocumented ini values: {sorted(set(recorder.ini) - rows)}"
    documented = {r for r in rows if r.startswith("--")}
    assert documented <= set(recorder.options), f"documented, not declared: {sorted(documented - set(recorder.options))}"


def test_every_agentic_option_named_anywhere_exists():
    real = set(declared().options)
    for page in [*PAGES, ROOT / "ARCHITECTURE.md"]:
        for name in re.findall(r"--(?:agentic-[a-z-]*[a-z]|models-file|model|runs)\b", page.read_text()):
            assert name in real, f"{page.relative_to(ROOT)} names {name}, which is no option"


# ---------------------------------------------------------------- the command lines shown


def test_there_are_commands_to_check():
    programs = {words[0] for _, words in all_command_lines()}
    assert {"pytest", "agentic-leaderboard", "agentic-report", "agentic-merge"} <= programs


@pytest.mark.parametrize("where,words", all_command_lines(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_command_options_exist(where, words):
    known = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", help_text(words[0])))
    for word in words[1:]:
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            assert name in known, f"{where}: {' '.join(words)}: {words[0]} has no option {name}"


@pytest.mark.parametrize("where,words", [(w, c) for w, c in all_command_lines() if c[0] == "pytest"],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_command_models_and_markers_exist(where, words):
    entries = registry_entries()
    ours = snippet_models()
    markers = help_text("pytest") + markers_text()
    for flag, value in zip(words, words[1:]):
        if flag == "--model" and value not in PLACEHOLDER_MODELS:
            assert value in entries or value in ours, f"{where}: --model {value} is no models.yaml entry"
        if flag == "-m":
            for name in re.findall(r"[A-Za-z_]\w*", value):
                if name not in {"and", "or", "not"}:
                    assert f"@pytest.mark.{name}:" in markers, f"{where}: -m {name} is no registered marker"


@functools.cache
def markers_text() -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "--markers"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


# ---------------------------------------------------------------- YAML examples


YAML_BLOCKS = [b for b in ALL_BLOCKS if b.info == "yaml"]


def test_every_yaml_example_is_one_of_the_checked_kinds():
    kinds = []
    for block in YAML_BLOCKS:
        doc = yaml.safe_load(block.body)
        kind = [k for k in ("models", "jobs", "predictions") if isinstance(doc, dict) and k in doc]
        assert len(kind) == 1, f"{block.where}: a YAML example no test checks (expected models, jobs or predictions)"
        kinds += kind
    assert {"models", "jobs", "predictions"} <= set(kinds)


@pytest.mark.parametrize("block", [b for b in YAML_BLOCKS if "models" in yaml.safe_load(b.body)],
                         ids=lambda b: b.where)
def test_models_yaml_examples_load_through_the_registry(block, tmp_path):
    registry = load_snippet(block, tmp_path)
    for entry in registry.entries.values():
        assert entry.api_key_env or entry.required_env or entry.server, f"{block.where}: {entry.name} names no key"


@pytest.mark.parametrize("block", [b for b in YAML_BLOCKS if "predictions" in yaml.safe_load(b.body)],
                         ids=lambda b: b.where)
def test_predictions_examples_load(block, tmp_path):
    path = tmp_path / "predictions.yaml"
    path.write_text(block.body)
    assert predictions.load(path, models=list(registry_entries()))


@pytest.mark.parametrize("block", [b for b in YAML_BLOCKS if "jobs" in yaml.safe_load(b.body)],
                         ids=lambda b: b.where)
def test_workflow_examples_give_each_model_its_credentials(block):
    entries = registry_entries()
    checked = 0
    for run, env in workflow_runs(yaml.safe_load(block.body)):
        for words in commands(Block(block.page, block.line, "", run, False)):
            for flag, value in zip(words, words[1:]):
                if flag == "--model" and value in entries:
                    entry = entries[value]
                    needed = {*entry.required_env, *filter(None, [entry.api_key_env, entry.api_base_env])}
                    assert needed <= set(env), f"{block.where}: --model {value} needs {sorted(needed)}, " \
                                               f"the step gives {sorted(env)}"
                    extra = {k for k in env if re.search(r"KEY|TOKEN|SECRET", k)} - needed
                    assert not extra, f"{block.where}: --model {value} reads no {sorted(extra)}"
                    checked += 1
    assert checked, f"{block.where}: a workflow that runs no models.yaml entry"


# ---------------------------------------------------------------- the README


def test_readme_is_short_and_holds_the_ci_test_command():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 160
    ci = (ROOT / ".ci" / "run").read_text()
    command = re.search(r"^# The README's test command:\n(.+)$", ci, re.M).group(1)
    assert f"&& {command}\n" in readme
    assert re.search(r"^mkdocs build --strict\b", ci, re.M)


def test_readme_own_model_example_has_api_key_env():
    readme_models = [b for b in blocks(ROOT / "README.md") if b.info == "yaml"]
    assert len(readme_models) == 1
    entry, = load_snippet(readme_models[0]).entries.values()
    assert entry.model.startswith("openai/") and entry.api_base and entry.api_key_env
    run, = [b for b in blocks(ROOT / "README.md") if b.info == "bash"]
    assert f"export {entry.api_key_env}=" in run.body and f"pytest --model {entry.name}" in run.body
