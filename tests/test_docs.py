"""The reference in docs/ is tested as the README is: every ```sh command of every page runs, and
every command shown with its output prints what is shown (see `docblocks`). Pages run in name
order, each block in the order written, in one folder, so a page may use a file an earlier
command of the same page wrote. Every relative link of the README and of docs/ leads to a file
of the repository (and a heading of it, when the link names one), the layout page names every
part of the package, and the figures the pages quote about the corpus are counted from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import arrivalbench
from docblocks import ROOT, anchors, check_shown_outputs, clone, commands, links, run_commands

DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))

SKIP: dict[str, str] = {}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone(tmp_path_factory.mktemp("clone"))


def test_every_skip_names_a_command_of_some_page() -> None:
    found = {c for page in PAGES for c in commands(page.read_text(encoding="utf-8"))}
    assert set(SKIP) <= found


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_command_of_the_page_runs(root: Path, page: Path) -> None:
    run_commands(root, page.read_text(encoding="utf-8"), SKIP)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_shown_outputs_are_what_the_command_prints(root: Path, page: Path) -> None:
    check_shown_outputs(root, page.read_text(encoding="utf-8"), SKIP)


def test_every_link_leads_to_a_file_and_heading() -> None:
    broken = []
    for page in [ROOT / "README.md", *PAGES]:
        for target in links(page.read_text(encoding="utf-8")):
            path, _, fragment = target.partition("#")
            file = (page.parent / path) if path else page
            if not file.exists() or (fragment and file.suffix == ".md" and fragment
                                     not in anchors(file.read_text(encoding="utf-8"))):
                broken.append((page.relative_to(ROOT).as_posix(), target))
    assert broken == []


def test_the_layout_names_every_part_of_the_package() -> None:
    package = Path(arrivalbench.__file__).parent
    parts = {p.name for p in package.iterdir()
             if (p.is_dir() and (p / "__init__.py").exists())
             or (p.suffix == ".py" and p.name != "__init__.py")}
    layout = (DOCS / "architecture.md").read_text(encoding="utf-8")
    assert {p for p in parts if not re.search(rf"\b{re.escape(p)}/?\s", layout)} == set()


def test_the_figures_of_the_corpus_are_counted_from_it() -> None:
    """Counts the pages quote about the corpus and `make run` are the corpus's own: the tasks,
    the negative controls, the built-in arms' cells and their replays (the plan of every cell),
    and the labelled scripts of the idiom signature."""
    import yaml

    from arrivalbench.core.grading import plan
    from arrivalbench.core.task import builtin_ids, load_spec

    specs = [load_spec(t) for t in builtin_ids("core")]  # the study, what `make run` grades
    negatives = sum(len(s.negatives) for s in specs)
    cells = sum(2 + len(s.negatives) for s in specs)  # gold, template, each negative
    replays = sum((2 + len(s.negatives)) * len(plan(s)) for s in specs)
    labelled = sum(len(yaml.safe_load((ROOT / "tests/idioms" / f).read_text(encoding="utf-8")))
                   for f in ("corpus.yaml", "tricky.yaml"))

    def text(page: str) -> str:
        return " ".join((ROOT / page).read_text(encoding="utf-8").split())

    readme = text("README.md")
    assert f"the {len(specs)} built-in tasks — {cells} cells, {replays:,} replays" in readme
    assert f"negatives {negatives} {negatives}/{negatives}" in readme  # the summary block
    assert f"{replays} replays graded" in readme
    assert f"{len(specs)} built-in tasks" in text("docs/tasks.md")
    assert f"{negatives} negative controls" in text("docs/tasks.md")
    assert f"{len(specs)} tasks, {cells} cells, {replays:,} replays" in text("docs/performance.md")
    assert f"each of the {negatives} negative controls" in text("docs/performance.md")
    assert f"labelled set of {labelled} scripts" in text("docs/idioms.md")
    assert f"corpus ({len(specs) + negatives})" in text("docs/idioms.md")
