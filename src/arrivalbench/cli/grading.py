"""`grade` and `explain`: one pipeline on one task."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click
from rich.text import Text

from arrivalbench import explain as explaining
from arrivalbench import render, words
from arrivalbench.cli import ci_reports
from arrivalbench.cli.app import app
from arrivalbench.cli.console import out
from arrivalbench.cli.documents import grade_document, project_document
from arrivalbench.cli.exits import verdict_status, warn
from arrivalbench.cli.options import (
    allowance_option,
    check_statements,
    engine_option,
    json_option,
    landing_option,
    refuse_unless,
    results_file,
    schedule_choice,
    seeds_option,
    task_option,
    timeout_option,
)
from arrivalbench.core.artifacts import ArtifactRef, check_path_engine, kind_of, traits
from arrivalbench.core.engine import DEFAULT_ENGINE, FACTS, EngineName, Limits, backend
from arrivalbench.core.engine.cost import Cost, check_measurable
from arrivalbench.core.grading import GradeOptions, Point, plan
from arrivalbench.core.lateness import MODEL, Allowance, key_text
from arrivalbench.core.schedules import Schedule
from arrivalbench.core.task import BUILTIN_DIR, Landing, TaskSpec, load_spec, source_of
from arrivalbench.core.values import JSON, canonical_json
from arrivalbench.core.verdict import Verdict
from arrivalbench.errors import ArrivalBenchError
from arrivalbench.explain import DEFAULT_BUDGET as EXPLAIN_BUDGET
from arrivalbench.sql.syntax import parse_problem
from arrivalbench.study.isolated import bounded
from arrivalbench.study.isolated import describe as describe_artifact
from arrivalbench.words import count, printable


@app.command()
@click.argument("pipeline", type=click.Path(path_type=Path))
@task_option("A built-in task id or a task folder (or, for a dbt project, --data).")
@click.option("--data", "data", type=click.Path(path_type=Path, file_okay=False),
              help="For a dbt project, instead of --task: a folder with one data file per "
                   "source table (<table>.csv, .parquet or .jsonl); the model is graded "
                   "against itself built with --full-refresh over all of it.")
@click.option("--model", "model", metavar="MODEL",
              help="With --data: the one incremental model to grade (default: every one).")
@click.option("--select", "select", multiple=True, metavar="SELECTOR",
              help="With --data: grade the incremental models these dbt selectors select "
                   "(tag:x, path:models/marts, +fct_orders; repeatable or space-separated, "
                   "as dbt ls reads them). On a task: the model graded as the task's target "
                   "(default: the model named after the target).")
@click.option("--schedule", "kinds", multiple=True, type=schedule_choice(),
              help="Grade only these schedules (repeatable). Default: snapshot, both controls "
                   "and every hazard the task declares.")
@seeds_option()
@timeout_option
@json_option()
@click.option("--every-batch", is_flag=True,
              help="Also compare the target after every completed run with the reference over "
                   "the records delivered so far; the first divergent batch joins the detail.")
@click.option("--plan", "plan_file", type=click.Path(path_type=Path, dir_okay=False),
              help="Replay this explicit delivery plan (JSON, as show --json and explain "
                   "write it) instead of generated schedules.")
@click.option("--cost", "measure", is_flag=True,
              help="Also measure each replay's rows read and written, and read amplification.")
@engine_option("The engine PIPELINE runs on (the reference is always computed by DuckDB).")
@click.option("--env", "passed_env", multiple=True, metavar="NAME",
              help="For a dbt project: let env_var() read this variable of your environment "
                   "(repeatable). No other variable is there.")
@click.option("--replay-timeout", type=click.FloatRange(min=0, min_open=True),
              default=Limits.replay_seconds, show_default=True,
              help="Seconds one whole replay may run.")
@click.option("--load-timeout", type=click.FloatRange(min=0, min_open=True),
              default=Limits.load_seconds, show_default=True,
              help="Seconds loading a dbt project (parse and compile) may take.")
@click.option("--run-timeout", type=click.FloatRange(min=0, min_open=True),
              default=Limits.run_seconds, show_default=True,
              help="Seconds one dbt run (one batch of a replay) may take.")
@landing_option(None, "How each batch reaches the sources: alone (batch), or appended to what "
                      "landed before, its load time in _landed_at (accumulate). Default: "
                      "accumulate with --data, else batch.")
@allowance_option
@click.option("--junit", "junit", type=click.Path(path_type=Path, dir_okay=False),
              metavar="FILE", help="Also write the verdicts as JUnit XML: a test suite per "
                                   "model (or task), a test case per schedule.")
@click.option("--markdown", "markdown", type=click.Path(path_type=Path, dir_okay=False),
              metavar="FILE", help="Also write a Markdown summary a CI job can post: per "
                                   "model its PASS/FAIL/ERROR counts and failing schedules.")
def grade(pipeline: Path, task: str | None, data: Path | None, model: str | None,
          select: Sequence[str], kinds: Sequence[str], seeds: int, timeout: float,
          as_json: bool, every_batch: bool, plan_file: Path | None, measure: bool,
          engine: EngineName, passed_env: Sequence[str], replay_timeout: float,
          load_timeout: float, run_timeout: float, landing: Landing | None,
          allowance: Allowance | str | None, junit: Path | None, markdown: Path | None) -> None:
    """Grade PIPELINE (a .sql script or a dbt project folder) on TASK, or a dbt project's
    incremental models on its own data (--data). Exit 0 if every verdict is PASS, 1
    otherwise."""
    backend(engine)  # a missing extra is one line before anything runs
    check_path_engine(pipeline, engine)
    ci_reports.check_paths(junit=junit, markdown=markdown)
    limits = Limits(statement_seconds=timeout, replay_seconds=replay_timeout,
                    load_seconds=load_timeout, run_seconds=run_timeout)
    _refuse_project_options(pipeline, select=" ".join(select) or None, passed_env=passed_env)
    needs = "--every-batch" if every_batch else "--allowed-lateness" if allowance else None
    on_task = _one_model(select) if data is None else None  # on a task: the model graded
    if data is None:
        graded_on = [_graded(pipeline, task=task, data=None, model=model, select=on_task,
                             passed_env=passed_env, needs_prefixes=needs, limits=limits)]
    else:
        graded_on = _graded_models(pipeline, task=task, data=data, model=model,
                                   select=select, passed_env=passed_env, needs_prefixes=needs,
                                   limits=limits)
    if plan_file is not None and len(graded_on) > 1:
        raise ArrivalBenchError(f"--plan {plan_file}: a plan replays on one model; name it "
                                "with --model MODEL")
    landing = landing or default_landing(own_data=data is not None)
    options = GradeOptions(engine, limits, every_batch=every_batch, measure=measure,
                           landing=landing, allowance=allowance)
    for spec, ref in graded_on:  # every model's bad input before any model's grade
        _check_time_options(ref, options)
        if traits(ref).statements:
            check_statements(pipeline, ref.text, engine)
        check_reference(spec, limits)
    several = len(graded_on) > 1
    grades: list[tuple[TaskSpec, ArtifactRef, _Grade]] = []
    for spec, ref in graded_on:
        if plan_file is not None:
            graded = _grade_plan(pipeline, spec, ref, plan_file, kinds, options)
        else:
            graded = _grade_points(spec, ref, plan(spec, seeds, kinds), options,
                                   progress=not as_json,
                                   label=f"grading {spec.id}" if several else "grading")
        grades.append((spec, ref, graded))
    summaries = [ci_reports.Graded(
        spec.id, tuple(graded.verdicts),
        () if plan_file is not None else tuple(explain_argv(
            pipeline, _explained_on(task, data, on_task, passed_env, spec), graded.verdicts,
            timeout, engine) or ()),
        nondeterministic=graded.nondeterministic is not None)
        for spec, _ref, graded in grades]
    if as_json:
        documents = {spec.id: grade_document(spec, graded.verdicts,
                                             graded.costs if measure else None,
                                             graded.nondeterministic)
                     for spec, _ref, graded in grades}
        not_passing = [summary.name for summary in summaries if not summary.passes]
        click.echo(canonical_json(project_document(pipeline, data, documents, not_passing)
                                  if several else documents[grades[0][0].id]))
    else:
        for index, ((spec, ref, graded), summary) in enumerate(zip(grades, summaries,
                                                                   strict=True)):
            if index:
                out.print("")
            _print_grade(pipeline, spec, ref, graded, engine=engine, explain=summary.explain)
        if several:
            _print_summary(summaries)
    noun = "task" if data is None else "model"
    ci_reports.write(summaries, title=f"arrivalbench grade {pipeline} on "
                                      f"{data if data is not None else graded_on[0][0].id}",
                     noun=noun, junit=junit, markdown_file=markdown)
    for spec, _ref, graded in grades:
        if graded.nondeterministic is not None:
            warn(f"{spec.id}: {words.NONDETERMINISTIC}" if several else words.NONDETERMINISTIC)
    verdict_status(all(graded.passes for _spec, _ref, graded in grades))


def default_landing(*, own_data: bool) -> Landing:
    """A project on its own data lands as a warehouse loader does; a task, batch by batch."""
    return "accumulate" if own_data else "batch"


def _one_model(select: Sequence[str]) -> str | None:
    """On a task, `--select` names the one model graded as its target."""
    from arrivalbench.corpus.own_data import selector_words

    named = selector_words(select)
    if len(named) > 1:
        raise ArrivalBenchError(f"--select {' '.join(named)}: on a task, --select names the "
                                "one model graded as its target; dbt selectors go with --data")
    return named[0] if named else None


def _print_summary(summaries: Sequence[ci_reports.Graded]) -> None:
    """After every model's table: a line per model, then one on all of them."""
    out.print("")
    width = max(len(s.name) for s in summaries)
    for summary in summaries:
        failing = f": {', '.join(summary.failing)}" if summary.failing else ""
        out.print(Text.assemble((f"{summary.shown:5}", render.STYLE[summary.status]),
                                f" {summary.name:<{width}}  {ci_reports.tally(summary)}"
                                f"{failing}"), soft_wrap=True)
    # never folded: CI logs are read by line
    out.print(printable(ci_reports.overall(summaries)), markup=False, highlight=False,
              soft_wrap=True)


@dataclass(frozen=True)
class _Grade:
    """What a grade found: one verdict (and cost) per point, in the plan's order, and what a
    second snapshot replay changed, if anything."""

    verdicts: list[Verdict]
    costs: list[Cost | None]
    nondeterministic: dict[str, JSON] | None = None

    @property
    def passes(self) -> bool:
        """Every verdict PASS, and the second snapshot replay the same as the first."""
        return all(v.status == "PASS" for v in self.verdicts) and self.nondeterministic is None


def _grade_plan(pipeline: Path, spec: TaskSpec, ref: ArtifactRef, plan_file: Path,
                kinds: Sequence[str], options: GradeOptions) -> _Grade:
    from arrivalbench.study.isolated import grade_plan_file

    if kinds:
        raise ArrivalBenchError("--plan replays one plan: leave out --schedule")
    refuse_unless(click.get_current_context(), "seeds", "leave out --seeds",
                  "counts the seeds of generated schedules; --plan replays one plan")
    if options.measure:
        raise ArrivalBenchError("--cost measures generated schedules: leave out --plan")
    if not traits(ref).statements:
        raise ArrivalBenchError(f"--plan {plan_file}: plans replay SQL scripts; {pipeline} is "
                                f"{traits(ref).title}: grade it on generated schedules")
    verdict = grade_plan_file(spec, ref, plan_file, options=options)
    return _Grade([verdict], [None])


def _grade_points(spec: TaskSpec, ref: ArtifactRef, points: Sequence[Point],
                  options: GradeOptions, *, progress: bool, label: str = "grading") -> _Grade:
    from arrivalbench.core.replay import expected_all
    from arrivalbench.study.executors import Result
    from arrivalbench.study.isolated import grade_points

    if options.measure:
        check_measurable(options.engine, traits(ref).measured)
    expected_all(spec, options.limits)  # a broken task is its own error, before any replay
    arrived: dict[int, Result] = {}
    found: list[dict[str, JSON]] = []
    with render.progress(len(points), enabled=progress, label=label) as advance:
        def on_graded(index: int, result: Result, nondet: dict[str, JSON] | None) -> None:
            arrived[index] = result
            found.extend([nondet] if nondet is not None else [])
            advance(result.verdict.status)

        grade_points(spec, ref, points, options=options, on_graded=on_graded)
    return _Grade([arrived[i].verdict for i in range(len(points))],
                  [arrived[i].cost for i in range(len(points))], found[0] if found else None)


def _print_grade(pipeline: Path, spec: TaskSpec, ref: ArtifactRef, graded: _Grade, *,
                 engine: EngineName, explain: Sequence[str]) -> None:
    verdicts = graded.verdicts
    # DuckDB's parser says where a script stops parsing; PostgreSQL's says it per statement.
    problem = parse_problem(ref.text) if traits(ref).statements and \
        FACTS[engine].locates_parse_errors else None
    if problem is not None:  # every replay is the same ERROR: say it once, with its place
        out.print(Text(printable(f"{pipeline} does not parse: {problem.describe()}; every "
                                 "replay is an ERROR"), style=render.STYLE["ERROR"]))
    out.print(render.grade_table(spec, pipeline, verdicts))
    if any(c is not None for c in graded.costs):
        from arrivalbench.corpus.budget import within

        costs = graded.costs
        out.print(render.cost_table(
            verdicts, costs, [c is not None and not within(c, spec.budget) for c in costs],
            spec.budget.read_amplification))
    for block in [] if problem is not None else render.failure_details(verdicts):
        out.print(block)
    advice = render.control_advice(verdicts)
    if advice is not None:
        out.print(advice, markup=False, highlight=False)
    for line in render.command_lines("next: ", explain, out.width):
        # never folded by the console: the backslashes keep it one command to paste
        out.print(printable(line), markup=False, highlight=False, soft_wrap=True)


def _check_time_options(ref: ArtifactRef, options: GradeOptions) -> None:
    """`--allowed-lateness model` needs an artifact with an allowance of its own; a model that
    re-reads its sources is told when its sources hold only the batch."""
    # a project is named with its model: a whole-project grade has several
    what = f"{ref.origin}, model {ref.models[0]}" if ref.origin and ref.models else ref.origin
    if options.allowance == MODEL and ref.allowance is None:
        raise ArrivalBenchError(f"--allowed-lateness model: {what or 'the pipeline'} "
                                "declares no lookback of its own (only a dbt microbatch model "
                                "does); give a duration such as 36h")
    if ref.allowance is not None and options.landing == "batch":
        warn(f"{what}: a microbatch model re-reads its sources over its lookback, and "
             "under --landing batch they hold only the batch; --landing accumulate lands "
             "every batch in them, as a loader does")


def _refuse_project_options(pipeline: Path, *, select: str | None,
                            passed_env: Sequence[str]) -> None:
    if kind_of(pipeline) != "script":
        return
    if select is not None:
        raise ArrivalBenchError(f"--select {select}: only for a dbt project folder; {pipeline} "
                                "is a file")
    if passed_env:
        raise ArrivalBenchError(f"--env {passed_env[0]}: only for a dbt project folder; "
                                f"{pipeline} is a file")


def check_reference(spec: TaskSpec, limits: Limits) -> None:
    """A task folder of the user's own whose reference is not one row per target key is bad
    input here as at the gate: every verdict against it would be meaningless. The built-in
    tasks pass the gate."""
    if spec.path.resolve().is_relative_to(BUILTIN_DIR.resolve()):
        return
    from arrivalbench.core.replay import expected_all
    from arrivalbench.corpus.gate import key_repeats

    for target, table in zip(spec.targets, expected_all(spec, limits), strict=True):
        repeats = key_repeats(target, table)
        if repeats is not None:
            raise ArrivalBenchError(f"{spec.path / target.reference_file}: {repeats}; make it "
                                    "return one row per target key (or fix the target's key "
                                    "in task.yaml)")


def _explained_on(task: str | None, data: Path | None, select: str | None,
                  passed_env: Sequence[str], spec: TaskSpec) -> list[str] | None:
    """How `explain` names what a grade graded on: the task, or the data of a dbt project
    (None when the data's full refresh has no reference over a smaller delivery)."""
    env = [arg for name in passed_env for arg in ("--env", name)]
    if data is None:
        assert task is not None
        return ["--task", task, *(["--select", select] if select is not None else []), *env]
    from arrivalbench.corpus.own_data import over_prefixes

    return ["--data", str(data), "--model", spec.target.name, *env] if over_prefixes(spec) \
        else None


def explain_argv(pipeline: Path, on: list[str] | None, verdicts: Sequence[Verdict],
                 timeout: float, engine: EngineName) -> list[str] | None:
    """The `explain` command that reproduces the first failing verdict: the same pipeline, task
    (`on`: its options), schedule, seed, statement timeout and engine; None when every verdict
    passes or there is nothing to explain on."""
    first = next((v for v in verdicts if v.status != "PASS"), None)
    if first is None or on is None:
        return None
    argv = ["arrivalbench", "explain", str(pipeline), *on, "--schedule", first.schedule,
            "--seed", str(first.seed)]
    if timeout != Limits.statement_seconds:
        argv += ["--timeout", f"{timeout:g}"]
    if engine != DEFAULT_ENGINE:
        argv += ["--engine", engine]
    if first.landing != default_landing(own_data="--data" in on):
        argv += ["--landing", first.landing]
    if first.allowance:
        argv += ["--allowed-lateness", first.allowance]  # `model`, or seconds: `3600s`
    return argv


def _graded(pipeline: Path, *, task: str | None, data: Path | None, model: str | None,
            select: str | None, passed_env: Sequence[str], needs_prefixes: str | None,
            limits: Limits) -> tuple[TaskSpec, ArtifactRef]:
    """The task graded and the description of what is graded on it: `--task`'s, or with
    `--data` the task derived from the project and its data, the project graded as its
    model. `needs_prefixes` names what needs the reference over a part of the data, which a
    derived task may not have. Whatever runs the project's code (its parse, the full refresh)
    runs in one bounded child, which parses the project once for both."""
    if data is None:
        if task is None:
            raise ArrivalBenchError("give --task TASK (or, for a dbt project, --data DIR)")
        if model is not None:
            raise ArrivalBenchError("--model goes with --data; on a task, --select MODEL")
        spec = load_spec(task)
        return spec, describe_artifact(pipeline, spec, models=() if select is None else
                                       (select,), passed_env=passed_env, limits=limits)
    if task is not None or select is not None:
        raise ArrivalBenchError("--data derives the task from the project: leave out "
                                "--task and --select (--model names the model)")

    folder, ref = bounded(_derived, pipeline, data, model, tuple(passed_env), limits)
    spec = load_spec(folder)
    _check_prefixes(spec, needs_prefixes)
    return spec, ref


def _check_prefixes(spec: TaskSpec, needs_prefixes: str | None) -> None:
    """What needs a reference over a part of the data (`needs_prefixes` names it) is refused
    on a derived task whose full refresh is not one query over its sources."""
    from arrivalbench.corpus.own_data import over_prefixes

    if needs_prefixes is not None and not over_prefixes(spec):
        raise ArrivalBenchError(f"{needs_prefixes}: the full refresh of model "
                                f"{spec.target.name} is not one query over its sources, so "
                                "there is no reference over a part of the data; grade it "
                                "without")


def _graded_models(pipeline: Path, *, task: str | None, data: Path, model: str | None,
                   select: Sequence[str], passed_env: Sequence[str],
                   needs_prefixes: str | None, limits: Limits
                   ) -> list[tuple[TaskSpec, ArtifactRef]]:
    """`grade PROJECT --data DIR`: each incremental model graded (`--model`'s, those
    `--select` selects, else every one) with its task, derived from the project and its data
    in one bounded child that parses the project once for them all."""
    if task is not None:
        raise ArrivalBenchError("--data derives the task from the project: leave out --task "
                                "(--model or --select names the models)")
    found = bounded(_derived_each, pipeline, data, model, tuple(select), tuple(passed_env),
                    limits)
    graded_on = [(load_spec(folder), ref) for folder, ref in found]
    for spec, _ref in graded_on:
        _check_prefixes(spec, needs_prefixes)
    return graded_on


def _derived_each(project: Path, data: Path, model: str | None, select: tuple[str, ...],
                  passed_env: tuple[str, ...], limits: Limits
                  ) -> list[tuple[str, ArtifactRef]]:
    """In a bounded child: the task of each model `grade PROJECT --data DATA` grades (its
    folder) and the project described as graded on it."""
    from arrivalbench.corpus.own_data import derived_each

    return [(str(spec.path), ref) for spec, ref in derived_each(
        project, data, model=model, select=select, limits=limits, passed_env=passed_env)]


def _derived(project: Path, data: Path, model: str | None, passed_env: tuple[str, ...],
             limits: Limits) -> tuple[str, ArtifactRef]:
    """In a bounded child: the task of `grade PROJECT --data DATA` (its folder) and the
    project described as graded on it."""
    from arrivalbench.core.artifacts import read
    from arrivalbench.corpus.own_data import derived

    spec = derived(project, data, model, limits, passed_env=passed_env)
    ref = read(project, spec, models=[spec.target.name], passed_env=passed_env,
               limits=limits).ref
    return str(spec.path), ref


# -- explain (one failure, made small) -----------------------------------------------------------


@app.command("explain")
@click.argument("pipeline", type=click.Path(path_type=Path), required=False)
@task_option()
@click.option("--data", "data", type=click.Path(path_type=Path, file_okay=False),
              help="For a dbt project, instead of --task: its data, as for grade --data.")
@click.option("--model", "model", metavar="MODEL",
              help="With --data: the incremental model to explain (default: the only one).")
@click.option("--select", "select", metavar="MODEL",
              help="For a dbt project on a task: the model graded as the task's target.")
@click.option("--env", "passed_env", multiple=True, metavar="NAME",
              help="For a dbt project: let env_var() read this variable (repeatable).")
@click.option("--schedule", "kind", type=schedule_choice(),
              help="The schedule to explain. Default: the first failing one of a default grade.")
@click.option("--seed", type=click.IntRange(min=0),
              help="The seed to explain. Default: the first failing one, 0..4.")
@click.option("--budget", type=click.IntRange(min=1), default=EXPLAIN_BUDGET,
              show_default=True, help="Replays the shrinking may use.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path),
              help="Write a repro bundle here (a new or empty folder).")
@timeout_option
@json_option()
@click.option("--results", is_flag=False, flag_value="", metavar="[FILE]",
              help="Instead of one PIPELINE: explain every failing cell of this results file "
                   "(alone: $ARRIVALBENCH_RESULTS, else the default results file) and store "
                   "the minimal plans in it (table minimal_plans).")
@click.option("--arm", "arms", multiple=True, help="With --results: only this arm (repeatable).")
@engine_option("The engine PIPELINE runs on; with --results, the engine whose failing cells "
               "are explained.")
@landing_option(None, "How each batch reaches the sources, as for grade. Default: accumulate "
                      "with --data, else batch.")
@allowance_option
def explain_command(pipeline: Path | None, task: str | None, data: Path | None,
                    model: str | None, select: str | None, passed_env: Sequence[str],
                    kind: str | None, seed: int | None,
                    budget: int, out_dir: Path | None, timeout: float, as_json: bool,
                    results: str | None, arms: Sequence[str], engine: EngineName,
                    landing: Landing | None, allowance: Allowance | str | None) -> None:
    """Why PIPELINE (a .sql script or a dbt project folder) fails on TASK: the first divergent
    batch, a minimal failing delivery plan, its timeline and (for a script, with --out) a
    repro bundle. Exit 0 if it passes, 1 if it fails."""
    from arrivalbench.explain import bundle
    from arrivalbench.explain.text import describe

    if results is not None:
        if pipeline is not None or task is not None or data is not None or kind or \
                seed is not None or out_dir:
            raise ArrivalBenchError("--results explains stored cells: leave out PIPELINE, "
                                    "--task, --data, --schedule, --seed and --out")
        explain_study(results_file(results), budget, arms, Limits(statement_seconds=timeout),
                      engine)
        return
    if pipeline is None or (task is None and data is None):
        raise ArrivalBenchError("give PIPELINE and --task TASK (or, for a dbt project, --data "
                                "DIR; or --results FILE)")
    limits = Limits(statement_seconds=timeout)
    check_path_engine(pipeline, engine)
    if kind_of(pipeline) == "script":
        if data is not None or model is not None:
            raise ArrivalBenchError("--data and --model go with a dbt project folder; "
                                    f"{pipeline} is a file")
        _refuse_project_options(pipeline, select=select, passed_env=passed_env)
        if task is None:
            raise ArrivalBenchError("give --task TASK for a .sql script")
    elif out_dir is not None:
        raise ArrivalBenchError(f"--out writes a repro bundle for a SQL script; {pipeline} is "
                                "a folder: leave out --out")
    spec, ref = _graded(pipeline, task=task, data=data, model=model, select=select,
                        passed_env=passed_env, needs_prefixes="explain", limits=limits)
    landing = landing or default_landing(own_data=data is not None)
    _check_time_options(ref, GradeOptions(engine, limits, landing=landing, allowance=allowance))
    if traits(ref).statements:
        check_statements(pipeline, ref.text, engine)
    if kind is not None:
        explaining.check_schedule(spec, kind)
    if out_dir is not None:
        bundle.check_out(out_dir)
    # Shrinking replays the pipeline hundreds of times: in a bounded child, as grade's replays.
    found = bounded(_explained, source_of(spec), ref, kind, seed, budget, limits, engine,
                    landing, allowance)
    if found is None:
        where = f"{kind} " if kind else ""
        message = (f"{pipeline} passes {where}{'seed ' + str(seed) if seed is not None else ''}"
                   f" on {spec.id} with the every-batch check: nothing to explain").replace(
                       "  ", " ")
        if as_json:
            click.echo(canonical_json({"task": spec.id, "verdict": "PASS", "message": message}))
        else:
            click.echo(message)
        verdict_status(True)
    doc = found.document
    if out_dir is not None and found.minimal is not None:
        doc["repro"] = bundle.write(out_dir, spec, ref.text, found.minimal,
                                    found.needs_every_batch, engine, landing=landing,
                                    allowance=key_text(allowance))
    if as_json:
        click.echo(canonical_json(doc))
    else:
        for line in describe(doc):  # wrapped to the terminal; the repro command never folded
            if line.startswith("repro: "):
                out.print(printable(line), markup=False, highlight=False, soft_wrap=True)
            else:
                out.print(render.indented(printable(line)))
    verdict_status(found.verdict == "PASS" and not found.nondeterministic)


@dataclass(frozen=True)
class _Explained:
    """What `explain` prints of an explanation, as plain data: it crosses a process boundary."""

    document: dict[str, JSON]  # without its repro
    verdict: str
    nondeterministic: bool
    minimal: Schedule | None
    needs_every_batch: bool


def _explained(task: str, ref: ArtifactRef, kind: str | None, seed: int | None, budget: int,
               limits: Limits, engine: EngineName, landing: Landing,
               allowance: Allowance | str | None) -> _Explained | None:
    """The explanation of the first failing point of a default grade (or of the one asked
    for); None when it passes. Run by `explain` in a bounded child process."""
    from arrivalbench.core.artifacts import load

    spec = load_spec(task)
    artifact = load(ref, spec, limits=limits)
    picked = explaining.pick(spec, artifact, kind, seed, limits=limits, engine=engine,
                             landing=landing, allowance=allowance)
    if picked is None:
        return None
    found = explaining.explain(spec, artifact, *picked, budget=budget, limits=limits,
                               engine=engine, landing=landing, allowance=allowance)
    return _Explained(found.document(), found.verdict, found.nondeterministic is not None,
                      None if found.shrunk is None else found.shrunk.schedule,
                      found.needs_every_batch)


def explain_study(results: Path, budget: int, arms: Sequence[str], limits: Limits,
                  engine: EngineName = DEFAULT_ENGINE) -> None:
    from arrivalbench.explain.study import explain_results

    summary = explain_results(results, budget, arms, limits,
                              note=lambda m: click.echo(printable(m), err=True), engine=engine)
    click.echo(f"explained {count(summary.explained, 'failing artifact')} ({summary.skipped} "
               f"already explained) into {results}, table minimal_plans")
    for name, cells in summary.shapes.items():
        click.echo(f"{cells:6}  {name}")
