"""The README and the docs site hold to the code: the site builds strict, every option is documented,
and every command, option value, model name, credential and YAML example shown is checked against
the code (tests/test_docs_runs.py runs the examples that can run here)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pytest_agentic.verdicts import predictions

from .docs_pages import (ALL_BLOCKS, DOCS, PAGES, PLACEHOLDER_MODELS, ROOT, SHELL_INFOS, YAML_BLOCKS, Block,
                         all_command_lines, blocks, commands, declared, help_text, load_snippet, markers_text,
                         placeholder, registry_entries, snippet_models, workflow_runs)


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



# ---------------------------------------------------------------- YAML examples



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


# ---------------------------------------------------------------- what the examples leave behind

#: The options through which a command writes a file or folder of its own naming.
OUTPUT_OPTIONS = ("-o", "--output", "--out", "--agentic-out", "--junit-xml")


def written_paths(words: list[str]) -> list[str]:
    found = []
    for i, word in enumerate(words):
        name, _, value = word.partition("=")
        if name in OUTPUT_OPTIONS:
            found.append(value or (words[i + 1] if i + 1 < len(words) else ""))
    return found


def test_written_paths_are_found():
    assert written_paths(["agentic-report", "A", "-o", "x.html"]) == ["x.html"]
    assert written_paths(["pytest", "--agentic-out=s2", "--junit-xml=j.xml"]) == ["s2", "j.xml"]


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_first_contact_examples_leave_nothing_outside_gitignore():
    """What the README's and Getting started's commands write, run in the project, git ignores."""
    pages = {ROOT / "README.md", DOCS / "getting-started.md"}
    paths = [(where, path) for where, words in all_command_lines() for path in written_paths(words)
             if Path(where.split(":")[0]).name in {p.name for p in pages}]
    assert paths, "no command of the first-contact pages writes a file: the check would check nothing"
    for where, path in paths:
        probe = path.rstrip("/") + ("/probe" if path.endswith("/") or "." not in Path(path).name else "")
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", probe], cwd=ROOT).returncode == 0
        assert ignored, f"{where}: writes {path}, which .gitignore does not cover"
