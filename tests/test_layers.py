"""The package's import graph, read from the source with `ast`: no cycle between modules, and no
arrow from a lower layer to a higher one (the core never imports the agent, the report or the
CLI; the agent and the report never import the CLI or each other)."""

from __future__ import annotations

import ast
from pathlib import Path

import arrivalbench

PACKAGE = Path(arrivalbench.__file__).parent
LAYERS = {"core": 0, "agent": 1, "report": 1, "cli": 2}


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
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("agent", "report"):
        return parts[1]
    return "cli" if module == "arrivalbench.cli" else "core"


def test_the_graph_is_read() -> None:
    edges = graph()
    assert "arrivalbench.grading" in edges["arrivalbench.executors"]
    assert "arrivalbench.engine.duckdb" in edges["arrivalbench.replay"]


def test_no_arrow_points_up_or_across() -> None:
    back = sorted((a, b) for a, deps in graph().items() for b in deps
                  if LAYERS[layer(b)] > LAYERS[layer(a)]
                  or (layer(a) != layer(b) and LAYERS[layer(a)] == LAYERS[layer(b)]))
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
