"""The README and the docs site hold to the code: the site builds strict, every option is documented,
every command, model name and YAML example shown is checked against the code, and the cheap
commands marked runnable are run."""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from pytest_agentic import options
from pytest_agentic.run.models import ModelEntry, load_registry
from pytest_agentic.verdicts import predictions

from .fault_server import FaultServer
from .helpers import ROOT, load_task_module

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
            found.update(load_snippet(block).entries)
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


class _Recorder:
    """Stands in for pytest's parser: records what options.add_options declares."""

    def __init__(self) -> None:
        self.options: list[str] = []
        self.ini: list[str] = []
        self.spec: dict[str, dict[str, Any]] = {}

    def getgroup(self, *args: Any, **kwargs: Any) -> _Recorder:
        return self

    def addoption(self, *names: str, **kwargs: Any) -> None:
        self.options += names
        self.spec.update({name: kwargs for name in names})

    def addini(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.ini.append(name)


def declared() -> _Recorder:
    recorder = _Recorder()
    options.add_options(cast(Any, recorder))  # a stand-in with the three methods add_options calls
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
    # The README is not part of the site: its links into the docs are checked against the built pages.
    links = re.findall(r"\]\(([^)#\s]+)(?:#([\w-]+))?\)", (ROOT / "README.md").read_text())
    assert len([target for target, _ in links if target.startswith("docs/")]) >= 10
    for target, fragment in links:
        if target.startswith("http"):
            continue
        assert (ROOT / target).is_file(), f"README links {target}, which does not exist"
        if target.startswith("docs/") and fragment:
            built = site / Path(target).relative_to("docs").with_suffix("") / "index.html"
            assert f'id="{fragment}"' in built.read_text(), f"README links {target}#{fragment}: no such heading"
    # ARCHITECTURE.md stays at the top and is included whole in the site.
    architecture = (site / "architecture" / "index.html").read_text()
    for heading in re.findall(r"^## (.+)$", (ROOT / "ARCHITECTURE.md").read_text(), re.M):
        assert heading.split("`")[0].strip() in architecture


def test_every_page_is_in_the_nav():
    from mkdocs.config import load_config

    nav = load_config(str(ROOT / "mkdocs.yml"))["nav"]
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
    assert set(recorder.options) <= rows, \
        f"options without a row in docs/reference.md: {sorted(set(recorder.options) - rows)}"
    assert set(recorder.ini) <= rows, \
        f"ini values without a row in docs/reference.md (Ini options): {sorted(set(recorder.ini) - rows)}"
    documented = {r for r in rows if r.startswith("--")}
    assert documented <= set(recorder.options), f"documented, not declared: {sorted(documented - set(recorder.options))}"


def test_reference_rows_show_each_options_value_as_help_does():
    """`--option VALUE` in a row of docs/reference.md: VALUE is the option's metavar, or its choices."""
    spec = declared().spec
    rows = re.findall(r"^\| `(--[\w-]+)([^`]*)`", (DOCS / "reference.md").read_text(), re.M)
    assert len(rows) == len(set(spec))
    for name, shown in rows:
        kwargs = spec[name]
        want = kwargs.get("metavar") or "|".join(kwargs.get("choices", ()))
        assert shown.strip().replace("\\|", "|") == want, f"docs/reference.md: `{name}{shown}`, --help: {want!r}"


def test_every_agentic_option_named_anywhere_exists():
    real = set(declared().options)
    for page in [*PAGES, ROOT / "ARCHITECTURE.md"]:
        for name in re.findall(r"--(?:agentic-[a-z-]*[a-z]|models-file|model|runs)\b", page.read_text()):
            assert name in real, f"{page.relative_to(ROOT)} names {name}, which is no option"


def test_every_model_named_anywhere_exists():
    """`--model NAME` in prose, tables and blocks alike: an entry of models.yaml or of a docs example."""
    known = {*registry_entries(), *snippet_models(), *PLACEHOLDER_MODELS}
    named = 0
    for page in PAGES:
        for value in re.findall(r"--model[ =]([\w.-]+)", page.read_text()):
            assert value in known, f"{page.relative_to(ROOT)}: --model {value} is no models.yaml entry"
            named += 1
    assert named > 10


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


def placeholder(value: str) -> bool:
    """A value the reader fills in: N, X, K/N, PATH, CAMPAIGN_DIR, a shell or Actions expression."""
    return bool(re.fullmatch(r"[A-Z][A-Z_]*(/[A-Z])?", value)) or "$" in value


@pytest.mark.parametrize("where,words", [(w, c) for w, c in all_command_lines() if c[0] == "pytest"],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_command_option_values_parse(where, words):
    """Each value shown for a pytest-agentic option goes through that option's own type and choices."""
    spec = declared().spec
    rest = list(words[1:])
    while rest:
        word = rest.pop(0)
        name, eq, value = word.partition("=")
        if name not in spec:
            continue
        kwargs = spec[name]
        if kwargs.get("action") in ("store_true", "store_false"):
            assert not eq, f"{where}: {name} takes no value"
            continue
        if not eq:
            assert rest, f"{where}: {name} lacks its value"
            value = rest.pop(0)
        if placeholder(value):
            continue
        if "choices" in kwargs:
            assert value in kwargs["choices"], f"{where}: {name} {value}: not one of {kwargs['choices']}"
        if "type" in kwargs:
            kwargs["type"](value)  # raises on a value the option refuses


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


# ---------------------------------------------------------------- commands that run here


def project_copy(folder: Path) -> Path:
    """The benchmark as a user's checkout has it: tasks, models.yaml and the ini options."""
    shutil.copytree(ROOT / "tasks", folder / "tasks", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("models.yaml", "pyproject.toml"):
        shutil.copy(ROOT / name, folder / name)
    return folder


def run_shown(words: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", *words[1:]] if words[0] == "pytest" else [str(BIN / words[0]), *words[1:]]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


RUNNABLE_BLOCKS = [b for b in ALL_BLOCKS if b.runnable]


def expected_exit(block: Block, words: list[str]) -> int:
    line = next(raw for raw in logical_lines(block.body) if shlex.split(raw, comments=True)[:len(words)] == words)
    said = re.search(r"#.*\bexits? (\d)\b", line)
    return int(said.group(1)) if said else 0


def test_runnable_blocks_are_marked():
    assert RUNNABLE_BLOCKS, "no block of the docs is marked runnable"
    shown = [words for block in RUNNABLE_BLOCKS for words in commands(block)]
    assert ["pytest", "--model", "oracle", "-m", "task_09"] in shown
    assert ["pytest", "--help"] in shown


@pytest.mark.parametrize("block", RUNNABLE_BLOCKS, ids=lambda b: b.where)
def test_runnable_commands_run_as_the_docs_say(block, tmp_path):
    folder = project_copy(tmp_path)
    outputs = []
    for words in commands(block):
        done = run_shown(words, folder)
        want = expected_exit(block, words)
        assert done.returncode == want, f"{block.where}: {' '.join(words)} exited {done.returncode}, the docs " \
                                        f"say {want}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        outputs.append((words, done.stdout))
    for words, out in outputs:
        if words[:2] == ["pytest", "--model"]:
            assert f"{words[2]}:" in out and "judged" in out, out[-2000:]
        if words[0] == "agentic-leaderboard":
            ran = {w[2] for w, _ in outputs if w[:2] == ["pytest", "--model"]}
            assert ran and all(f"| {name} " in out for name in ran), out
        if words == ["pytest", "--help"]:
            assert "agent evaluation" in out and "CI gates" in out


class _KeyedServer(FaultServer):
    """A local OpenAI-compatible endpoint that plays scripted solutions and records the keys it was sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.auth: set[str] = set()
        super().__init__(*args, **kwargs)

    def reply(self, body: dict[str, Any], auth: str) -> dict[str, Any]:
        self.auth.add(auth)
        return super().reply(body, auth)


def test_readme_three_steps_end_to_end(tmp_path):
    """README's entry, with api_base pointed at a local OpenAI-compatible endpoint that plays task_09's
    reference solution: the key reaches the endpoint from api_key_env, and the campaign folder is where
    step 3 says, holding what it names."""
    readme = ROOT / "README.md"
    entry_block, = [b for b in blocks(readme) if b.info == "yaml"]
    run_block, = [b for b in blocks(readme) if b.info == "bash"]
    run_words, = commands(run_block)
    entry = yaml.safe_load(entry_block.body)["models"]
    (name, spec), = entry.items()
    folder = project_copy(tmp_path)
    instance = load_task_module(ROOT / "tasks" / "test_task_09_know_when_to_stop.py").build(0)
    with _KeyedServer({instance.prompt: instance.reference}) as server:
        local = {**spec, "api_base": server.api_base}
        models = yaml.safe_load((folder / "models.yaml").read_text())
        models["models"][name] = local
        (folder / "models.yaml").write_text(yaml.safe_dump(models, sort_keys=False))
        # Without the key: the session stops before any run, naming the variable.
        bare = {k: v for k, v in os.environ.items() if k != spec["api_key_env"]}
        missing = subprocess.run([sys.executable, "-m", "pytest", *run_words[1:], "-m", "task_09", "--runs", "1"],
                                 cwd=folder, capture_output=True, text=True, timeout=300, env=bare)
        assert missing.returncode != 0 and spec["api_key_env"] in missing.stdout + missing.stderr
        assert server.calls == 0
        done = run_shown([*run_words, "-m", "task_09", "--runs", "1"], folder,
                         {spec["api_key_env"]: "sk-readme-test"})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert server.calls >= 1 and server.auth == {"Bearer sk-readme-test"}
    campaign, = (folder / "agentic-results").iterdir()
    assert re.fullmatch(rf"\d{{8}}-\d{{6}}-{re.escape(name)}", campaign.name), campaign.name
    step3 = next(line for line in readme.read_text().splitlines() if "agentic-results/<YYYYMMDD-HHMMSS>-" in line)
    assert f"-{name}/`" in step3
    for artefact in re.findall(r"`([\w.]+\.(?:md|html|jsonl))`", readme.read_text().split("3. Read the results")[1]
                               .split("\n\n")[0]):
        assert (campaign / artefact).is_file(), artefact
    assert "1/1" in (campaign / "summary.md").read_text()
    assert "sk-readme-test" not in "".join(p.read_text(errors="replace") for p in campaign.rglob("*") if p.is_file())


def test_shell_examples_name_the_credentials_their_models_read():
    """A shell block that names a key's variable names the ones its models read, and no other."""
    entries = {**registry_entries(), **snippet_models()}
    checked = 0
    for block in ALL_BLOCKS:
        if block.info not in SHELL_INFOS:
            continue
        named = set(re.findall(r"\b(?:AWS_[A-Z_]+|[A-Z][A-Z0-9_]*_(?:API_KEY|TOKEN|SECRET)[A-Z0-9_]*)\b", block.body))
        models = [v for words in commands(block) for f, v in zip(words, words[1:]) if f == "--model" and v in entries]
        if not named or not models:
            continue
        needed = {n for m in models for n in (*entries[m].required_env, entries[m].api_key_env) if n}
        assert named == needed, f"{block.where}: names {sorted(named)}, its models ({models}) read {sorted(needed)}"
        checked += 1
    assert checked >= 2


def test_the_task_example_runs_as_the_page_says(pytester):
    """docs/writing-a-task.md's example task, as a user's own test file: the oracle passes it, the
    near-miss fails it as wrong_answer, and the items are named and marked as the page says."""
    page = DOCS / "writing-a-task.md"
    example, = [b for b in blocks(page) if b.info == "python"]
    pytester.makefile(".yaml", models="models:\n  oracle: {model: agentic-scripted/oracle}\n"
                                      "  near-miss: {model: agentic-scripted/near-miss}\n")
    pytester.makepyfile(test_mine=example.body)
    marker = re.search(r"marks it `(\w+)`", page.read_text()).group(1)
    item = re.search(r"\(`(test_\w+\[oracle-run1\])`\)", page.read_text()).group(1)
    passed = pytester.runpytest_subprocess("--strict-markers", "-v", "-m", marker, "--model", "oracle",
                                           "--agentic-out=out")
    passed.assert_outcomes(passed=3)
    assert f"test_mine.py::{item} PASSED" in passed.stdout.str()
    failed = pytester.runpytest_subprocess("--strict-markers", "-m", marker, "--model", "near-miss",
                                           "--agentic-out=out2")
    failed.assert_outcomes(failed=3)
    assert {r["failure_mode"] for r in json_lines(next((pytester.path / "out2").iterdir()) / "runs.jsonl")} \
        == {"wrong_answer"}


def json_lines(path: Path) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in path.read_text().splitlines()]
