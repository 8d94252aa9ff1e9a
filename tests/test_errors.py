"""Bugs are not bad input: exit 2 and one line for bad input only; an internal error keeps its
traceback, says it is a bug and exits 3; Ctrl-C exits 130; library messages name no flags."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arrivalbench.cli import main
from arrivalbench.core import grading
from arrivalbench.core.task import TaskSpec
from arrivalbench.errors import ArrivalBenchError


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    code = done.value.code
    return (code if isinstance(code, int) else 1), capsys.readouterr().err


def test_an_internal_error_keeps_its_traceback_and_says_it_is_a_bug(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug in the tasks table")

    monkeypatch.setattr("arrivalbench.render.tasks_table", broken)
    code, err = run_main(capsys, "tasks")
    assert code == 3
    assert "Traceback (most recent call last)" in err and "in broken" in err
    assert "ZeroDivisionError: a bug in the tasks table" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("arrivalbench: internal error: this is a bug in arrivalbench")
    assert "report it to" in last


def test_bad_input_is_still_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_main(capsys, "show", "no_such_task")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_ctrl_c_exits_130(capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("arrivalbench.render.tasks_table", interrupted)
    code, err = run_main(capsys, "tasks")
    assert code == 130 and err.strip() == "arrivalbench: interrupted"


def test_generate_does_not_blame_the_model_for_every_exception(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect_ai

    def eval_that_breaks(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug after the model was reached")

    monkeypatch.setattr(inspect_ai, "eval", eval_that_breaks)
    code, err = run_main(capsys, "generate", "--model", "mockllm/model", "--task",
                         "store_daily_revenue", "--results", str(tmp_path / "r.duckdb"))
    assert code == 3 and "Traceback" in err and "KeyError" in err
    assert "model mockllm/model" not in err


def test_library_errors_name_values_not_flags(tiny: TaskSpec) -> None:
    with pytest.raises(ArrivalBenchError) as raised:
        grading.plan(tiny, 0)
    assert str(raised.value) == "seeds 0: give a whole number of at least 1"
    from arrivalbench.study import executors, grid, regrade

    for call in (lambda: executors.make("dask"), lambda: grid.run(arms=["golden"]),
                 lambda: regrade.regrade(sample=0)):
        with pytest.raises(ArrivalBenchError) as raised:
            call()
        assert "--" not in str(raised.value), raised.value


GOLD = Path(__file__).parents[1] / "src/arrivalbench/tasks/store_daily_revenue/gold.sql"
SHOP = Path(__file__).parents[1] / "examples" / "your_data" / "shop"  # a dbt project
NO_DEDUP = GOLD.parent / "negatives" / "no_dedup.sql"


@pytest.mark.parametrize(("args", "status"), [
    (("grade", str(GOLD), "--task", "store_daily_revenue", "--schedule", "duplicates",
      "--seeds", "1"), 0),
    (("grade", str(NO_DEDUP), "--task", "store_daily_revenue", "--schedule", "duplicates",
      "--seeds", "1"), 1),
    (("grade", str(GOLD), "--task", "no_such_task"), 2),
    (("grade", str(GOLD), "--task", "store_daily_revenue", "--seeds", "0"), 2),
])
def test_every_command_tells_clean_found_and_bad_input_apart(
        capsys: pytest.CaptureFixture[str], args: tuple[str, ...], status: int) -> None:
    code, err = run_main(capsys, *args)
    assert code == status, err
    assert "Traceback" not in err


def test_a_crashed_grader_is_not_a_failing_pipeline(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A FAIL verdict exits 1, a bug while grading exits 3: CI tells them apart. (A bug in a
    worker process is the executors' test; this one breaks the grader's own process.)"""
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the report broke")

    monkeypatch.setattr("arrivalbench.render.grade_table", broken)
    code, err = run_main(capsys, "grade", str(NO_DEDUP), "--task", "store_daily_revenue",
                         "--schedule", "duplicates", "--seeds", "1")
    assert code == 3 and "RuntimeError: the report broke" in err


def test_the_help_lists_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    from arrivalbench import cli

    cli.main(["--help"])
    help_text = capsys.readouterr().out
    for status in (cli.DONE, cli.FOUND, cli.BAD_INPUT, cli.BUG, cli.INTERRUPTED):
        assert f"\n    {status} " in help_text


def test_a_reader_that_goes_away_is_not_a_verdict() -> None:
    """`arrivalbench tasks | head -1`: 141 as a shell reports SIGPIPE, no traceback."""
    import subprocess
    import sys

    process = subprocess.Popen([sys.executable, "-c", "from arrivalbench.cli import main; main()",
                                "tasks"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None
    process.stdout.close()  # nobody reads what it prints
    _, err = process.communicate(timeout=120)
    assert process.returncode == 141, err
    assert b"Traceback" not in err


def test_only_a_missing_extra_reads_as_one(capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    """A missing report distribution is bad input (exit 2, install the extra); an ImportError
    of arrivalbench's own modules is a bug (exit 3, traceback)."""
    import sys

    def fresh_report() -> None:  # the report's modules are imported again by the command
        for name in [m for m in sys.modules if m.startswith("arrivalbench.report")]:
            monkeypatch.delitem(sys.modules, name)

    fresh_report()
    monkeypatch.setitem(sys.modules, "arrivalbench.report.terminal", None)
    code, err = run_main(capsys, "report", "--results", str(tmp_path / "r.duckdb"))
    assert code == 3 and "Traceback" in err and "optional extra" not in err
    monkeypatch.undo()
    fresh_report()
    monkeypatch.setitem(sys.modules, "numpy", None)
    code, err = run_main(capsys, "report", "--results", str(tmp_path / "r.duckdb"))
    assert code == 2 and "pip install 'arrivalbench[report]'" in err


# -- library messages name parameters, never flags (the CLI words them) --------------------------

PACKAGE = Path(__file__).parents[1] / "src" / "arrivalbench"

# TEMPORARY: modules being rewritten whose messages still name flags; each is to be converted
# with `ParameterError`, `UnknownName` and `mention` and then taken out of this set, until it
# is empty. A module listed here that names no flag any more fails the test below, so the set
# only shrinks.
NOT_YET_CONVERTED: frozenset[str] = frozenset()


def app_flags() -> frozenset[str]:
    """Every option spelling of every command of the app (`--seeds`, `-M`, `--help`)."""
    import click

    from arrivalbench.cli import app

    found: set[str] = set()
    for command in [app, *app.commands.values()]:
        for param in command.params:
            if isinstance(param, click.Option):
                found |= set(param.opts) | set(param.secondary_opts)
    found |= set(app.context_settings.get("help_option_names", ()))
    return frozenset(found)


def _exception_names(trees: Iterable[ast.Module]) -> frozenset[str]:
    """The names of the builtin exceptions, of those of `arrivalbench.errors` and of every
    exception class defined in `trees`."""
    import builtins

    from arrivalbench import errors

    names = {n for n, v in [*vars(builtins).items(), *vars(errors).items()]
             if isinstance(v, type) and issubclass(v, BaseException)}
    classes = [node for tree in trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    while True:
        more = {c.name for c in classes if c.name not in names and any(
            (b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "")
            in names for b in c.bases)}
        if not more:
            return frozenset(names)
        names |= more


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr \
        if isinstance(func, ast.Attribute) else ""


def message_strings(tree: ast.Module, exceptions: frozenset[str]
                    ) -> Iterator[ast.Constant]:
    """Every string constant that may become part of an error's message in `tree`: inside a
    `raise` or an exception's constructor, and what reaches one there through a local or
    module name, a parameter of the function (at its call sites in this module, and its
    default) and the return value of a function of this module. A constant that is an element
    of a list, tuple or set literal is data (an argv handed to dbt or PostgreSQL), not prose."""
    parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def scope(node: ast.AST) -> ast.AST:
        while node in parent and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node = parent[node]
        return node

    functions = {f.name: f for f in ast.walk(tree)
                 if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call)]
    # What each name is assigned anywhere in the module, and the calls of each function by
    # name: looked up for every name a message reaches, so indexed once.
    assigned: dict[str, list[ast.AST]] = defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None:
                for target in {t.id for t in targets if isinstance(t, ast.Name)}:
                    assigned[target].append(node.value)
    calls_of: dict[str, list[ast.Call]] = defaultdict(list)
    for call in calls:
        calls_of[_callee(call)].append(call)
    todo: list[ast.AST] = [n.exc for n in ast.walk(tree) if isinstance(n, ast.Raise) and n.exc]
    todo += [c for c in calls if _callee(c) in exceptions]
    seen: set[ast.AST] = set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node
        elif isinstance(node, ast.Name):
            todo += _flows_into(node, scope(node), assigned, functions, calls_of)
        elif isinstance(node, ast.Call) and _callee(node) in functions:
            todo += [r.value for r in ast.walk(functions[_callee(node)])
                     if isinstance(r, ast.Return) and r.value is not None]
        todo += list(ast.iter_child_nodes(node))


def _flows_into(name: ast.Name, scope: ast.AST, assigned: dict[str, list[ast.AST]],
                functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
                calls_of: dict[str, list[ast.Call]]) -> list[ast.AST]:
    """The expressions whose value `name` may hold: what it is assigned anywhere in the
    module, and, for a parameter, its default and the arguments of the calls in the module."""
    found: list[ast.AST] = list(assigned.get(name.id, ()))
    if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        args = scope.args
        positional = [*args.posonlyargs, *args.args]
        names = [a.arg for a in positional]
        defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults,
                            strict=True))
        defaults |= {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                     if d is not None}
        if name.id in names or name.id in defaults:
            found += [defaults[name.id]] if name.id in defaults else []
            own = functions.get(scope.name) is scope
            for call in calls_of.get(scope.name, []) if own else []:
                at = names.index(name.id) if name.id in names else None
                if at is not None and at < len(call.args):
                    found.append(call.args[at])
                found += [k.value for k in call.keywords if k.arg == name.id]
    return found


def flag_mentions(source: str, flags: frozenset[str], exceptions: frozenset[str]
                  ) -> list[tuple[int, str, str]]:
    """(line, flag, text) for each message string of `source` that names one of `flags`."""
    spelt = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(flags, key=len,
                                                                    reverse=True)))
                       + r")(?![\w-])")
    found = []
    for constant in message_strings(ast.parse(source), exceptions):
        hit = spelt.search(constant.value)
        if hit is not None:
            found.append((constant.lineno, hit.group(1), constant.value))
    return sorted(found)


def library_modules() -> dict[str, str]:
    """Every module of the package below the command line, by its path in the package."""
    return {path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(PACKAGE.rglob("*.py"))
            if not path.relative_to(PACKAGE).as_posix().startswith("cli/")}


def test_no_library_message_names_a_flag() -> None:
    """A flag belongs to the command that is running: below `cli/`, a message names the
    parameter (as `ParameterError` or through `mention`), and the CLI words it as its flag."""
    modules = library_modules()
    exceptions = _exception_names(ast.parse(s) for s in modules.values())
    flags = app_flags()
    found = {path: flag_mentions(source, flags, exceptions) for path, source in modules.items()}
    offending = [f"{path}:{line}: {flag} in {text!r}" for path, hits in found.items()
                 if path not in NOT_YET_CONVERTED for line, flag, text in hits]
    assert offending == [], "\n".join(offending)
    converted = sorted(p for p in NOT_YET_CONVERTED if not found.get(p))
    assert converted == [], f"names no flag any more: take it out of NOT_YET_CONVERTED: {converted}"


def test_the_flag_scan_follows_a_message_but_not_an_argv() -> None:
    """The scan above finds a flag wherever it can reach a message, and leaves dbt's argv."""
    source = '''
from arrivalbench.errors import ArrivalBenchError
class ModelError(ArrivalBenchError): ...
HINT = "give --task TASK"
def one(value, what="--seeds"):
    if value:
        raise ModelError(f"{what} {value}: too many")
    fix = "or --engine duckdb"
    raise ArrivalBenchError(f"{value}: {fix} {HINT} {_why()}")
def _why():
    return "with --cost"
def error(name):
    return ModelError(f"{name}: bad")
def two():
    one(1, "--workers")
    error("--seed")
    run(["dbt", "run", "--select", "+model", "--target", "dev"])
    argv = ("--model", "m")
    raise ArrivalBenchError(f"dbt failed: {len(argv)}")
'''
    tree = ast.parse(source)
    found = flag_mentions(source, app_flags(), _exception_names([tree]))
    assert sorted(flag for _line, flag, _text in found) == [
        "--cost", "--engine", "--seed", "--seeds", "--task", "--workers"]


# -- typed errors, worded by the command line ----------------------------------------------------


def test_a_parameter_error_names_the_value_and_what_is_allowed() -> None:
    import pickle

    from arrivalbench.errors import ParameterError, UnknownName, mention

    error = ParameterError("keys", "orders=id", f"no column id; give {mention('keys')} "
                                                "orders=COLUMN")
    assert (error.what, error.value) == ("keys", "orders=id")
    assert str(error) == "keys orders=id: no column id; give keys orders=COLUMN"
    assert error.worded(lambda name: f"--{name[:-1]}") == \
        "--key orders=id: no column id; give --key orders=COLUMN"
    missing = ParameterError("sources", None, "none given")
    assert str(missing) == "sources: none given"
    unknown = UnknownName("engine", "duckd", ("duckdb", "postgres"))
    assert str(unknown) == "engine 'duckd': unknown; did you mean duckdb? give one of duckdb, " \
                           "postgres"
    assert unknown.allowed == ("duckdb", "postgres")
    # A bounded child raises it to its parent: it crosses a process boundary whole.
    for sent in (error, missing, unknown, ArrivalBenchError(f"use {mention('seeds')}")):
        back = pickle.loads(pickle.dumps(sent))
        assert type(back) is type(sent) and str(back) == str(sent) and vars(back) == vars(sent)
    assert str(ArrivalBenchError(f"grade it with {mention('engine')} duckdb")) == \
        "grade it with engine duckdb"


def test_the_command_line_words_each_parameter_as_the_flag_of_its_command() -> None:
    from arrivalbench.cli import app
    from arrivalbench.cli.exits import flag

    commands = app.commands
    assert flag(commands["run"], "measure") == "--cost"  # by the option's name
    assert flag(commands["run"], "arms") == "--arm"
    assert flag(commands["init"], "sources") == "--source"
    assert flag(commands["init"], "event_times") == "--event-time"
    assert flag(commands["init"], "project") == "--from-dbt"
    assert flag(commands["grade"], "passed_env") == "--env"
    assert flag(commands["generate"], "model_args") == "--model-arg"  # the long one, not -M
    assert flag(commands["grade"], "pipeline") == "PIPELINE"  # an argument: its metavar
    assert flag(commands["run"], "budget") == "budget"  # not an option of `run`
    assert flag(None, "seeds") == "seeds"


@pytest.mark.parametrize(("args", "line"), [
    (("run", "--engine", "postgres", "--cost", "--task", "tiny"),
     "--cost: engine 'postgres' cannot measure rows read; cost is measured on duckdb"),
    (("grade", str(SHOP), "--data", "/nonexistent/data"),
     "--data /nonexistent/data: not a folder; give the folder that holds one file per source "
     "table (<table>.csv, .parquet or .jsonl)"),
    (("grade", str(GOLD), "--data", str(GOLD.parent)),
     f"--data {GOLD.parent}: goes with a dbt project folder; {GOLD} has no dbt_project.yml (a "
     "script is graded on a task: --task TASK)"),
])
def test_a_library_error_reads_in_flags_on_the_command_line(
        capsys: pytest.CaptureFixture[str], args: tuple[str, ...], line: str) -> None:
    code, err = run_main(capsys, *args)
    assert (code, err) == (2, f"arrivalbench: error: {line}\n")


def test_cost_of_a_dbt_project_is_refused_in_the_words_of_grade(
        capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("dbt.cli.main")
    project = Path(__file__).parents[1] / "examples" / "dbt" / "passing"
    code, err = run_main(capsys, "grade", str(project), "--task", "ad_clicks_clean", "--cost")
    assert (code, err) == (2, "arrivalbench: error: --cost: a dbt project's statements are not "
                              "measured; leave it out\n")


def _choice_options() -> list[tuple[str, str, tuple[str, ...]]]:
    """(command, flag, choices) of every option of the app whose values are a closed set."""
    import click

    from arrivalbench.cli import app

    return [(name, max(p.opts, key=len), tuple(map(str, p.type.choices)))
            for name, command in sorted(app.commands.items()) for p in command.params
            if isinstance(p, click.Option) and isinstance(p.type, click.Choice)]


def test_every_closed_set_option_suggests_close_names() -> None:
    from arrivalbench.cli.options import Choice

    options = _choice_options()
    assert {(c, f) for c, f, _ in options} >= {
        ("run", "--arm"), ("run", "--engine"), ("run", "--executor"), ("run", "--tier"),
        ("grade", "--schedule"), ("explain", "--schedule"), ("show", "--schedule"),
        ("show", "--prompt"), ("generate", "--prompt"), ("gate", "--executor"),
        ("report", "--tier"), ("tasks", "--tier")}
    import click

    from arrivalbench.cli import app

    plain = [(name, p.name) for name, command in app.commands.items() for p in command.params
             if isinstance(p.type, click.Choice) and not isinstance(p.type, Choice)]
    assert plain == [], "a closed set of names takes cli.options.Choice, which suggests"


@pytest.mark.parametrize(("command", "option", "choices"), _choice_options())
def test_a_misspelt_choice_is_one_line_with_the_close_names(
        capsys: pytest.CaptureFixture[str], command: str, option: str,
        choices: tuple[str, ...]) -> None:
    for meant in choices:
        typo = meant[:-1] if len(meant) > 3 else meant + "x"
        code, err = run_main(capsys, command, option, typo)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        hint = re.search(r"; did you mean (.*?)\? \(see 'arrivalbench ", err)
        assert hint is not None and meant in hint.group(1).split(" or "), err


def test_the_results_file_is_read_from_the_environment_in_one_place(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`default_results` is the one reader of $ARRIVALBENCH_RESULTS: no option asks click to
    read a variable of its own, and every command's --results default is that reader's."""
    import click

    from arrivalbench.cli import app
    from arrivalbench.cli.options import RESULTS_ENVVAR, default_results, results_file
    from arrivalbench.study.store import DEFAULT_RESULTS

    options = [p for command in app.commands.values() for p in command.params]
    assert [p.name for p in options if p.envvar] == []
    results = [p for p in options if p.name == "results" and isinstance(p, click.Option)]
    assert len(results) >= 4
    # Each defaults to the reader; explain's, alone, means the reader's file too.
    assert all(p.default is default_results or p.flag_value == "" for p in results), \
        "a --results option with a default of its own"
    monkeypatch.delenv(RESULTS_ENVVAR, raising=False)
    assert default_results() == Path(DEFAULT_RESULTS) == results_file("")
    monkeypatch.setenv(RESULTS_ENVVAR, str(tmp_path / "mine.duckdb"))
    assert default_results() == tmp_path / "mine.duckdb" == results_file("")
    assert results_file("other.duckdb") == Path("other.duckdb")
