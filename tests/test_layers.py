"""The package's import graph, read from the source with `ast`: no cycle between modules, and no
arrow from a lower layer to a higher one, nor across between two layers of the same rank (the
agent and the report never import each other).

The layers, bottom up: the root exception and Ctrl-C handling; `core` (what decides a verdict);
the verdict put into words and terminal rendering at the top level, beside `sql` (reading SQL);
`study` (arms, executors, the results store: grading at scale); `corpus` (what makes a task
admissible: the gate runs its replays on the study's executors); `explain`; `agent` and
`report`; `cli`."""

from __future__ import annotations

import ast
from pathlib import Path

import arrivalbench

PACKAGE = Path(arrivalbench.__file__).parent
RANK = {"base": 0, "core": 1, "text": 2, "sql": 2, "study": 3, "corpus": 4, "explain": 5,
        "agent": 6, "report": 6, "cli": 7}
TOP_LEVEL = {"arrivalbench": "base", "arrivalbench.errors": "base",
             "arrivalbench.interrupts": "base", "arrivalbench.words": "text",
             "arrivalbench.render": "text"}


def modules() -> dict[str, Path]:
    found = {}
    for file in PACKAGE.rglob("*.py"):
        parts = list(file.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = file
    return found


def graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports, at the top or inside a function."""
    known = modules()
    edges: dict[str, set[str]] = {}
    for name, file in known.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                deps |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known
                         else node.module for a in node.names}
        edges[name] = {d for d in deps if d in known and d != name}
    return edges


def layer(module: str) -> str:
    if module in TOP_LEVEL:
        return TOP_LEVEL[module]
    return module.split(".")[1]


def test_every_module_has_a_layer() -> None:
    assert {layer(m) for m in modules()} <= set(RANK)


def test_the_top_level_stays_small() -> None:
    top = {m for m in modules() if m.count(".") == 1 and not (PACKAGE / m.split(".")[1]).is_dir()}
    assert top == set(TOP_LEVEL) - {"arrivalbench"}


def test_the_graph_is_read() -> None:
    edges = graph()
    assert "arrivalbench.core.grading" in edges["arrivalbench.study.executors.unit"]
    assert "arrivalbench.core.engine.duckdb" in edges["arrivalbench.core.replay"]


def test_no_arrow_points_up_or_across() -> None:
    back = sorted((a, b) for a, deps in graph().items() for b in deps
                  if RANK[layer(b)] > RANK[layer(a)]
                  or (layer(a) != layer(b) and RANK[layer(a)] == RANK[layer(b)]))
    assert back == []


def test_no_cycle_between_modules() -> None:
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(edges[node]):
            if state.get(dep) == 1:
                cycles.append([*path[path.index(dep):], dep])
            elif dep not in state:
                visit(dep, [*path, dep])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def kind_tests(tree: ast.AST) -> list[str]:
    """The comparisons in `tree` with an artifact kind's name (`ref.kind == "dbt"`)."""
    from arrivalbench.core.artifacts import ARTIFACT_KINDS

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare | ast.MatchValue):
            sides = [node.left, *node.comparators] if isinstance(node, ast.Compare) \
                else [node.value]
            values = [v for side in sides for v in (
                side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side])]
            if any(isinstance(v, ast.Constant) and v.value in ARTIFACT_KINDS for v in values):
                found.append(ast.unparse(node))
    return found


def test_only_the_artifacts_and_the_clis_arguments_tell_kinds_apart() -> None:
    """A new kind of artifact is `core/artifacts` and a loader: every other module asks an
    artifact's traits, never which kind it is (the CLI's argument checks may)."""
    allowed = ("arrivalbench.core.artifacts", "arrivalbench.cli")
    found = {name: tests for name, file in modules().items()
             if not name.startswith(allowed)
             and (tests := kind_tests(ast.parse(file.read_text(encoding="utf-8"))))}
    assert found == {}
    assert kind_tests(ast.parse("if ref.kind == 'dbt': pass")) == ["ref.kind == 'dbt'"]
