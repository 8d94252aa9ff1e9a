"""The pages of docs/ whose commands the suite runs, in groups: one test file per group,
`test_docs_<group>.py`, so that pytest-xdist (`--dist loadfile`) runs the groups side by side.
A group's pages share one folder laid out like the repository's root (`docblocks.clone`), in
name order, each block in the order written, so a page may use a file an earlier command of the
same page wrote. test_docs.py checks that every page with a command is in exactly one group."""

from __future__ import annotations

from pathlib import Path

from docblocks import ROOT, check_shown_outputs, run_commands

DOCS = ROOT / "docs"

GROUPS: dict[str, tuple[str, ...]] = {
    "tasks": ("tasks.md",),  # init (your own data, a dbt project) and the gate: the slowest
    "study": ("models.md", "reports.md", "results.md"),  # run, regrade, report, generate
    "grading": ("cost.md", "explain.md", "idioms.md", "schedules.md"),  # one pipeline at a time
}

SKIP: dict[str, str] = {}  # command -> why it is not run here


def pages(group: str) -> list[Path]:
    return [DOCS / name for name in sorted(GROUPS[group])]


def commands_run(root: Path, page: Path) -> None:
    run_commands(root, page.read_text(encoding="utf-8"), SKIP)


def outputs_shown(root: Path, page: Path) -> None:
    check_shown_outputs(root, page.read_text(encoding="utf-8"), SKIP)
