"""The package's layout holds: subpackages by role, imports pointing one way, no cycles, small modules.

Every import counts, including those inside functions and under ``TYPE_CHECKING``: a lazy
import that breaks a cycle at run time still ties two concepts together.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "pytest_agentic"

#: Layers, lowest first. A module may import its own layer and the layers below it.
LAYERS = {"run": 0, "campaign": 1, "verdicts": 2, "servers": 2, "report": 3, "integration": 4}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    if module == "pytest_agentic._version":
        return "run"  # a constant with no imports, readable from every layer
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and parts[1] in LAYERS else "integration"


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package modules ``path`` imports, wherever the import statement stands."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                # ``from . import tools`` imports the module tools; ``from .x import name`` the module x.
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
    return {m for m in found if m in modules and m != name}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PKG.rglob("*.py")}
    modules = set(paths)
    return {name: imports_of(path, modules) for name, path in paths.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, or None (iterative depth-first search; package inits are facades, skipped)."""
    edges = {m: {t for t in ts if not _is_package(t)} for m, ts in graph.items() if not _is_package(m)}
    state: dict[str, int] = {}
    for root in sorted(edges):
        if state.get(root):
            continue
        stack = [(root, iter(sorted(edges[root])))]
        path = [root]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(sorted(edges[child]))))
                path.append(child)
    return None


def _is_package(module: str) -> bool:
    return (PKG.parent / module.replace(".", "/") / "__init__.py").is_file()


def test_no_import_cycle(graph: dict[str, set[str]]) -> None:
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_cycles() -> None:
    assert _cycle({"pytest_agentic.a": {"pytest_agentic.b"}, "pytest_agentic.b": {"pytest_agentic.c"},
                   "pytest_agentic.c": {"pytest_agentic.a"}}) == [
        "pytest_agentic.a", "pytest_agentic.b", "pytest_agentic.c", "pytest_agentic.a"]
    assert _cycle({"pytest_agentic.a": {"pytest_agentic.b"}, "pytest_agentic.b": set()}) is None


def test_imports_point_down(graph: dict[str, set[str]]) -> None:
    wrong = []
    for module, targets in sorted(graph.items()):
        if module == "pytest_agentic":
            continue  # the public API re-exports from run/
        for target in sorted(targets):
            here, there = layer_of(module), layer_of(target)
            if target == "pytest_agentic":
                wrong.append(f"{module} imports the package facade")
            elif there == "servers" and here not in ("servers", "integration"):
                wrong.append(f"{module} ({here}) imports {target}: servers are used by the integration alone")
            elif LAYERS[there] > LAYERS[here] or (there != here and LAYERS[there] == LAYERS[here]):
                wrong.append(f"{module} ({here}) imports {target} ({there})")
    assert not wrong, "\n".join(wrong)


def test_the_call_path_reads_little_of_run(graph: dict[str, set[str]]) -> None:
    """run/calls/ is how a call reaches the endpoint: of the rest of run/ it reads the registry, limits and GC pause."""
    allowed = {"pytest_agentic.run.models", "pytest_agentic.run.limits", "pytest_agentic.run.scripted",
               "pytest_agentic.run.gcpause"}
    wrong = {f"{module} imports {target}" for module, targets in graph.items()
             if module.startswith("pytest_agentic.run.calls")
             for target in targets
             if not target.startswith("pytest_agentic.run.calls") and target not in allowed}
    assert not wrong, sorted(wrong)


def test_imports_inside_functions_are_seen() -> None:
    source = PKG / "campaign" / "writer.py"
    found = imports_of(source, {"pytest_agentic.campaign.resume", "pytest_agentic.campaign.summary"})
    assert found == {"pytest_agentic.campaign.resume", "pytest_agentic.campaign.summary"}


def test_few_modules_at_the_top_and_every_module_small() -> None:
    top = sorted(p.name for p in PKG.glob("*.py"))
    assert len(top) <= 15, top
    long = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= 500}
    assert not long, long


def test_public_api_unchanged() -> None:
    import pytest_agentic

    for name in ("task", "TaskInstance", "TaskSpec", "ToolCall", "Final", "RunResult", "FailureMode",
                 "ToolCallLog", "CANONICAL_SEED", "__version__"):
        assert hasattr(pytest_agentic, name), name
