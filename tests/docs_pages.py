"""The README and the docs pages as a test reads them: fenced blocks, the command lines and YAML
examples they hold, and what the code declares to check them against (tests/test_docs.py checks,
tests/test_docs_runs.py runs)."""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from pytest_agentic import options
from pytest_agentic.run.models import ModelEntry, load_registry

from .helpers import ROOT

DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
BIN = Path(sys.executable).parent
#: Words the docs use for "a models.yaml entry of your own" in a command line.
PLACEHOLDER_MODELS = {"X", "NAME", "all"}
#: The info strings of fenced blocks that hold command lines.
SHELL_INFOS = {"", "bash", "console", "shell", "sh"}
#: The HTML comment (invisible on the site) that marks the next fenced block as run by this file.
RUNNABLE = "<!-- runnable: tests/test_docs_runs.py runs these commands -->"

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


def logical_lines(body: str) -> list[str]:
    """The lines of a shell block, a line continued with a backslash joined to the next."""
    return re.sub(r"\\\n\s*", " ", body).splitlines()


def commands(block: Block) -> list[list[str]]:
    """The pytest and agentic-* command lines of a shell block, each as its words (chains split at &&)."""
    found = []
    for raw in logical_lines(block.body):
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
            entries = load_snippet(block).entries
            found.update(entries)
            # An entry with variants is named by its own name too (``--model NAME`` runs every variant).
            found.update((e.variant_of, e) for e in entries.values() if e.variant_of)
    return found


def load_snippet(block: Block, tmp: Path | None = None):
    """Load a docs models.yaml example through the real registry (which names file, entry and key on error)."""
    import tempfile

    if tmp is None:
        with tempfile.TemporaryDirectory() as folder:
            return load_snippet(block, Path(folder))
    path = tmp / f"snippet-{block.page.stem}-{block.line}.yaml"
    path.write_text(block.body, encoding="utf-8")
    return load_registry(path)


class Recorder:
    """Stands in for pytest's parser: records what options.add_options declares."""

    def __init__(self) -> None:
        self.options: list[str] = []
        self.ini: list[str] = []
        self.spec: dict[str, dict[str, Any]] = {}

    def getgroup(self, *args: Any, **kwargs: Any) -> Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.options += names
        self.spec.update({name: kwargs for name in names})

    def addini(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.ini.append(name)


def declared() -> Recorder:
    recorder = Recorder()
    options.add_options(cast(Any, recorder))  # a stand-in with the three methods add_options calls
    return recorder


def placeholder(value: str) -> bool:
    """A value the reader fills in: N, X, K/N, PATH, CAMPAIGN_DIR, a shell or Actions expression."""
    return bool(re.fullmatch(r"[A-Z][A-Z_]*(/[A-Z])?", value)) or "$" in value


@functools.cache
def markers_text() -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "--markers"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


YAML_BLOCKS = [b for b in ALL_BLOCKS if b.info == "yaml"]

RUNNABLE_BLOCKS = [b for b in ALL_BLOCKS if b.runnable]
