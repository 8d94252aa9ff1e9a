"""The reference in docs/ is tested as the README is: every ```sh command of every page runs, and
every command shown with its output prints what is shown (see `docblocks`), in the test files
of the page groups (`docpages`); here, that every page with a command is in one of them. Every
synopsis (a ```text block) of the README and of docs/ names the options of its command as the
command has them. Every relative link of the README and of docs/ leads to a file of the
repository (and a heading of it, when the link names one), the layout page names every part of
the package, and the figures the pages quote about the corpus are counted from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import arrivalbench
from arrivalbench.cli import app
from docblocks import (
    ROOT,
    anchors,
    blocks,
    commands,
    links,
    shown_outputs,
    synopses,
    synopsis_problems,
)
from docpages import DOCS, GROUPS, SKIP

PAGES = sorted(DOCS.glob("*.md"))
README = ROOT / "README.md"


def test_every_skip_names_a_command_of_some_page() -> None:
    found = {c for page in PAGES for c in commands(page.read_text(encoding="utf-8"))}
    assert set(SKIP) <= found


def test_every_page_with_a_command_is_in_one_group_with_a_test_file() -> None:
    grouped = [name for names in GROUPS.values() for name in names]
    with_commands = {p.name for p in PAGES if commands(text := p.read_text(encoding="utf-8"))
                     or shown_outputs(text)}
    assert sorted(grouped) == sorted(with_commands)  # each once, none left out, none stale
    assert all((ROOT / "tests" / f"test_docs_{group}.py").exists() for group in GROUPS)


@pytest.mark.parametrize("page", [README, *PAGES], ids=[p.name for p in [README, *PAGES]])
def test_every_synopsis_names_the_options_of_its_command(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert [p for block in synopses(text) for p in synopsis_problems(block, app)] == []


def problems(synopsis: str) -> list[str]:
    return [p for block in synopses(f"```text\n{synopsis}\n```\n")
            for p in synopsis_problems(block, app)]


def test_a_stale_synopsis_is_told_apart() -> None:
    """Each way a synopsis can go stale is found: an option the command has not got (or no
    such command), one it has that a full synopsis leaves out, a flag with a value, an option
    without its value, repeatable or not unlike the command, choices that are not its own."""
    full = "arrivalbench regrade [--results FILE] [--sample N] [--workers N] [--executor local|ray]"
    assert problems(full) == []
    assert problems("arrivalbench regrade [--results FILE] ...") == []  # partial: some options
    assert problems("arrivalbench regrade [--results FILE] [--sample N] [--workers N]") == [
        "the synopsis of regrade leaves out ['--executor']"]
    assert problems("arrivalbench regrade --result FILE ...") == [
        "'arrivalbench regrade --result FILE ...': regrade has no --result"]
    assert problems("arrivalbench regrades ...") == ["'arrivalbench regrades ...': no such command"]
    for wrong, says in [
            ("arrivalbench grade P --json F ...", "--json takes 0 value(s), shown with ['F']"),
            ("arrivalbench grade P --seeds ...", "--seeds takes 1 value(s), shown with []"),
            ("arrivalbench report --compare A ...", "--compare takes 2 value(s), shown with ['A']"),
            ("arrivalbench grade P [--schedule KIND] ...", "--schedule is repeatable"),
            ("arrivalbench grade P --env A --env B ...", ""),  # given twice: repeatable
            ("arrivalbench grade P [--seeds N]... ...", "--seeds is not repeatable"),
            ("arrivalbench run --executor local|ray|dask ...",
             "--executor takes local|ray, shown as local|ray|dask"),
            ("arrivalbench run --engine sqlite ...",
             "--engine takes duckdb|postgres, shown with sqlite")]:
        assert problems(wrong) == ([f"{wrong!r}: {says}"] if says else []), wrong


def test_a_synopsis_reads_brackets_alternatives_and_lines_that_go_on() -> None:
    [[first, second]] = synopses("```text\n"
                                 "arrivalbench init F (--source N=F)... [--key N=C[,C]]...\n"
                                 "                  (--a X | --b [Y])  # a comment\n"
                                 "arrivalbench run ... --cost\n```\n")
    assert [(u.name, u.values, u.repeated) for u in first.options] == [
        ("--source", ("N=F",), True), ("--key", ("N=C[,C]",), True), ("--a", ("X",), False),
        ("--b", ("Y",), False)]
    assert not first.partial and second.partial and second.command == "run"
    assert [lang for lang, _ in blocks("```text\na\n```\n")] == ["text"]


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
