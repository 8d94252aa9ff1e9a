"""What a CI job keeps of a grade: a JUnit XML file (one test suite per model or task graded, one
test case per schedule, its seeds folded into it) and a Markdown summary a job can post. Both are
written after the grade, to paths checked before it, and hold no time or host: the same verdicts
give the same bytes."""

from __future__ import annotations

import io
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arrivalbench.core.verdict import STATUSES, Verdict
from arrivalbench.errors import ArrivalBenchError, ParameterError
from arrivalbench.words import beyond_allowance, count, line, printable, terminal


@dataclass(frozen=True)
class Graded:
    """One model (or task) as a grade left it: its verdicts in the plan's order and the command
    that explains its first failure, if there is one to explain."""

    name: str
    verdicts: tuple[Verdict, ...]
    explain: tuple[str, ...] = ()  # argv; empty when it passes or there is nothing to explain
    nondeterministic: bool = False  # a second snapshot replay changed the table

    @property
    def passes(self) -> bool:
        return self.status == "PASS" and not self.nondeterministic

    @property
    def shown(self) -> str:
        """The status, and what makes a PASS not one."""
        return f"{self.status} (nondeterministic)" if self.nondeterministic else self.status

    @property
    def counts(self) -> Counter[str]:
        return Counter(v.status for v in self.verdicts)

    @property
    def status(self) -> str:
        """PASS when every verdict is; else FAIL when any is; else ERROR."""
        found = self.counts
        return "FAIL" if found["FAIL"] else "ERROR" if found["ERROR"] else "PASS"

    @property
    def schedules(self) -> dict[str, list[Verdict]]:
        """Schedule -> its verdicts, seed by seed, schedules in the plan's order."""
        found: dict[str, list[Verdict]] = {}
        for v in self.verdicts:
            found.setdefault(v.schedule, []).append(v)
        return found

    @property
    def failing(self) -> list[str]:
        """The schedules with a verdict that is not PASS, in the plan's order, each marked as
        the grade's table marks it when its every failure is data later than the model's
        lookback."""
        found = []
        for schedule, cells in self.schedules.items():
            bad = [v for v in cells if v.status != "PASS"]
            if bad:
                late = all(map(beyond_allowance, bad))
                found.append(f"{schedule} (late, by design)" if late else schedule)
        return found


def tally(graded: Graded) -> str:
    """`PASS 21  FAIL 10 (5 late, by design)`, as under a grade's table."""
    found = graded.counts
    late = sum(map(beyond_allowance, graded.verdicts))
    return "  ".join(f"{k} {found[k]}" + (f" ({late} late, by design)" if k == "FAIL" and late
                                          else "") for k in STATUSES if found[k])


def overall(graded: Sequence[Graded], noun: str = "model") -> str:
    """One line on all of them: how many pass, and which do not."""
    bad = [g.name for g in graded if not g.passes]
    if len(graded) == 1:
        return f"{graded[0].name} {'does not pass' if bad else 'passes'}"
    if not bad:
        return f"all {count(len(graded), noun)} pass"
    return (f"{len(graded) - len(bad)} of {count(len(graded), noun)} pass; not passing: "
            f"{', '.join(bad)}")


# -- the files --------------------------------------------------------------------------------


def check_paths(*, junit: Path | None, markdown: Path | None) -> None:
    """A report path is a file in a folder that exists, and the two are not one file: checked
    before anything is graded, so that bad input writes nothing."""
    given = [(name, path) for name, path in (("junit", junit), ("markdown", markdown))
             if path is not None]
    for name, path in given:
        folder = path.parent
        if not folder.is_dir():
            raise ParameterError(name, path, f"folder {folder} does not exist; create it, or "
                                 "name a file in a folder that does")
        if path.is_dir():
            raise ParameterError(name, path, "is a folder; name a file")
    if len(given) == 2 and given[0][1].resolve() == given[1][1].resolve():
        raise ArrivalBenchError(f"--junit and --markdown both name {given[0][1]}; give each a "
                                "file of its own")


def junit_xml(graded: Sequence[Graded], title: str) -> str:
    """The JUnit XML document: a test suite per graded model, a test case per schedule, which
    fails (or errs) when any of its seeds does, with the first such seed's difference or error
    as its text."""
    from junitparser import Error, Failure, JUnitXml, TestCase, TestSuite

    document = JUnitXml(printable(title, lines=False))
    for model in graded:
        suite = TestSuite(model.name)
        for schedule, cells in model.schedules.items():
            case = TestCase(schedule, classname=model.name)
            bad = [v for v in cells if v.status != "PASS"]
            if bad:
                first = bad[0]
                seeds = ", ".join(str(v.seed) for v in bad)
                message = (f"{'seed' if len(bad) == 1 else 'seeds'} {seeds} of {len(cells)} "
                           f"not PASS; seed {first.seed}: {line(first)}")
                result = Failure(message) if first.status == "FAIL" else Error(message)
                text = f"seed {first.seed}: {first.status}\n{terminal(first)}"
                if model.explain and first is _first_failure(model):
                    text += "\nexplain it: " + printable(shlex.join(model.explain))
                result.text = text + "\n"
                case.result = [result]
            suite.add_testcase(case)
        suite.update_statistics()  # type: ignore[no-untyped-call]
        document.add_testsuite(suite)
    document.update_statistics()  # type: ignore[no-untyped-call]
    buffer = io.BytesIO()
    document.write(buffer, pretty=True)
    return buffer.getvalue().decode("utf-8")


def _first_failure(model: Graded) -> Verdict | None:
    return next((v for v in model.verdicts if v.status != "PASS"), None)


def markdown(graded: Sequence[Graded], title: str, noun: str = "model") -> str:
    """A summary table a CI job can post: per model its verdict, PASS/FAIL/ERROR counts and
    failing schedules, then one line on all of them and the commands that explain each first
    failure."""
    lines = [f"### {_cell(title)}", "",
             f"| {noun} | verdict | PASS | FAIL | ERROR | failing schedules |",
             "| --- | --- | ---: | ---: | ---: | --- |"]
    for model in graded:
        found = model.counts
        failing = ", ".join(_schedule_cell(s) for s in model.failing)
        lines.append(f"| `{_cell(model.name)}` | **{model.shown}** | {found['PASS']} | "
                     f"{found['FAIL']} | {found['ERROR']} | {failing} |")
    lines += ["", overall(graded, noun) + "."]
    commands = [shlex.join(m.explain) for m in graded if m.explain]
    if commands:
        lines += ["", "Explain the first failure of each:", "", "```sh",
                  *map(printable, commands), "```"]
    return "\n".join(lines) + "\n"


def _schedule_cell(failing: str) -> str:
    """`late_arrival` (late, by design): the schedule's name as code, the mark as words."""
    name, _, mark = failing.partition(" ")
    return f"`{name}`" + (f" {mark}" if mark else "")


def _cell(text: str) -> str:
    return printable(text, lines=False).replace("|", "\\|").replace("`", "'")


def write(graded: Sequence[Graded], *, title: str, noun: str, junit: Path | None,
          markdown_file: Path | None) -> None:
    if junit is not None:
        junit.write_text(junit_xml(graded, title), encoding="utf-8")
    if markdown_file is not None:
        markdown_file.write_text(markdown(graded, title, noun), encoding="utf-8")
