"""`run`, `regrade`, `generate`, `report`: grading arms at scale, and what it found."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click
from rich.markup import escape

from arrivalbench.cli.app import app
from arrivalbench.cli.console import out
from arrivalbench.cli.exits import verdict_status
from arrivalbench.cli.grading import explain_study
from arrivalbench.cli.options import (
    Choice,
    command_line,
    engine_option,
    executor_option,
    landing_option,
    results_option,
    seeds_option,
    tasks_option,
    tier_option,
    workers_option,
)
from arrivalbench.core.engine import EngineName, Limits
from arrivalbench.core.task import Landing, TierChoice, select
from arrivalbench.corpus.prompts import DEFAULT_VARIANT, VARIANTS
from arrivalbench.errors import is_missing, missing_extra
from arrivalbench.explain import DEFAULT_BUDGET as EXPLAIN_BUDGET
from arrivalbench.render import indented
from arrivalbench.study.keys import engine_label
from arrivalbench.words import count, printable, printable_doc

# -- run, regrade (grading at scale) -------------------------------------------------------------


@app.command("run")
@click.option("--arm", "arms", multiple=True,
              type=Choice(("gold", "negatives", "template")),
              help="A built-in arm (repeatable). Default, without --submissions: all three.")
@click.option("--submissions", type=click.Path(path_type=Path, file_okay=False),
              help="A folder of scripts: <task_id>.sql, or <task_id>/<n>.sql for replicates.")
@click.option("--arm-name", help="The arm name of --submissions (default: the folder's name).")
@click.option("--allow-unmatched", is_flag=True,
              help="Grade --submissions even when some of its files name no task (they are "
                   "listed and left out).")
@tasks_option
@tier_option("core")
@seeds_option()
@results_option("The DuckDB results file; created if missing, added to if not. A trial run "
                "belongs in a file of its own.")
@workers_option()
@executor_option
@click.option("--explain", "then_explain", is_flag=True,
              help="Then store the minimal failing plan of every failing cell (as explain "
                   "--results does).")
@click.option("--cost", "measure", is_flag=True,
              help="Also store each replay's rows read and written (the costs table).")
# On by default: it costs a sixth of a run (docs/performance.md) and is stored beside the
# final-table verdict, which every metric reads, never in its place.
@click.option("--every-batch/--no-every-batch", default=True, show_default=True,
              help="Also store the verdict of the every-batch check beside each final-table "
                   "verdict (a replay stored without it is graded again).")
@engine_option("The engine every artifact runs on; gold and negatives are each task's "
               "pipelines for it. Verdicts of both engines live in one results file.")
@landing_option()
def run_command(arms: Sequence[str], submissions: Path | None, arm_name: str | None,
                allow_unmatched: bool, task_refs: Sequence[str], tier: TierChoice | None,
                seeds: int, results: Path, workers: int | None, executor: str,
                then_explain: bool, measure: bool, every_batch: bool,
                engine: EngineName, landing: Landing) -> None:
    """Grade arms into a results file: every cell on snapshot, both controls and each declared
    hazard for every seed. Replays already in the file are not graded again, so the same command
    resumes an interrupted run and more arms add to the file."""
    from arrivalbench.cli.summary import summary_table
    from arrivalbench.study import grid

    summary = grid.run(results, arms, submissions=submissions, arm_name=arm_name,
                       tasks=select(task_refs, tier, "core"), seeds=seeds, workers=workers,
                       executor=executor, command=command_line(),
                       allow_unmatched=allow_unmatched, measure=measure,
                       every_batch=every_batch, engine=engine, landing=landing)
    out.print(summary_table(summary, out.width))
    if then_explain:
        explain_study(results, EXPLAIN_BUDGET, (), Limits(), engine)


@app.command("regrade")
@results_option("The results file to check (opened read-only).")
@click.option("--sample", type=click.IntRange(min=1), metavar="N",
              help="Re-run only N stored replays, drawn with a fixed seed.")
@workers_option()
@executor_option
def regrade_command(results: Path, sample: int | None, workers: int | None,
                    executor: str) -> None:
    """Re-run stored replays and compare verdict bytes. Prints each mismatch with its key and
    both verdicts; exit 0 when every byte matches, 1 on any mismatch."""
    from arrivalbench.study.regrade import regrade

    report = regrade(results, sample=sample, workers=workers, executor=executor)
    for m in report.mismatches:
        k = m.key
        which = "" if m.record == "final" else f" ({m.record} record)"
        click.echo(printable(f"mismatch{which}: task {m.task} ({k.task_digest}) schedule "
                             f"{k.schedule} seed {k.seed} artifact {k.artifact} "
                             f"{engine_label(k.engine_version)} arrivalbench "
                             f"{k.harness_version}"))
        click.echo(printable(f"  stored:  {m.stored}"))
        click.echo(printable(f"  regrade: {m.now}"))
    click.echo(f"regraded {report.checked} of {count(report.stored, 'stored replay')} in "
               f"{report.seconds:.1f} s: {count(len(report.mismatches), 'mismatch', 'mismatches')}"
               + (f", {report.skipped} not reproducible here (see warnings)"
                  if report.skipped else "")
               + (f", {len(report.nondeterministic)} differences in artifacts marked "
                  "nondeterministic (not counted)" if report.nondeterministic else ""))
    verdict_status(not report.mismatches)



# -- generate, idioms (model arms) ---------------------------------------------------------------


@app.command()
@click.option("--model", required=True,
              help="PROVIDER/MODEL as Inspect AI names it: openai/gpt-4o, "
                   "anthropic/claude-sonnet-4-0, openrouter/..., mockllm/model (offline).")
@click.option("--prompt", "variant", type=Choice(VARIANTS), default=DEFAULT_VARIANT,
              show_default=True, help="The prompt variant.")
@click.option("--replicates", type=click.IntRange(min=1), default=1, show_default=True,
              help="Conversations per task (replicates 0..N-1).")
@tasks_option
@tier_option("core")
@results_option("The DuckDB results file; Inspect's logs go to <stem>.inspect-logs/ beside "
                "it. Give a trial (mockllm/model, a test model) a file of its own.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=8000, show_default=True,
              help="Output token cap of each model call; a reply cut there holds no script.")
@click.option("--base-url", help="The API's base URL, e.g. a local OpenAI-compatible server "
                                 "(http://127.0.0.1:8000/v1 with --model openai/NAME, spoken "
                                 "to over chat completions; set OPENAI_API_KEY to any value).")
@click.option("-M", "--model-arg", "model_args", multiple=True, metavar="KEY=VALUE",
              help="A model argument passed to Inspect's provider (repeatable), e.g. "
                   "-M responses_api=true.")
@click.option("--max-connections", type=click.IntRange(min=1),
              help="Concurrent model calls (Inspect's default per provider otherwise).")
@click.option("--max-retries", type=click.IntRange(min=0),
              help="Retries of a failed model call (Inspect's default otherwise); a call that "
                   "still fails leaves its sample as a cell with reason provider_error.")
@seeds_option("Seeds 0..N-1 for each schedule but snapshot, when grading.")
@workers_option("Worker processes for grading. Default: the number of cores.")
@click.option("--dry-run", is_flag=True,
              help="Print the samples, the most model calls and a token estimate; call nothing.")
@engine_option("The engine the model writes for: the prompt names it, the snapshot test and "
               "the grading run there. Off DuckDB the arm is <model>:<variant>@<engine>.")
def generate(model: str, variant: str, replicates: int, task_refs: Sequence[str],
             tier: TierChoice | None, results: Path, max_tokens: int, base_url: str | None,
             model_args: Sequence[str], max_connections: int | None, max_retries: int | None,
             seeds: int, workers: int | None, dry_run: bool, engine: EngineName) -> None:
    """Generate a model arm (<model>:<variant>) through Inspect AI, store it and grade it.

    Each task gets a conversation: the prompt, then up to 3 replies, each script run on the
    snapshot test with the error or the differing rows fed back; the last script is graded on
    every schedule. Samples already in the results file are not generated again."""
    from arrivalbench.agent import generate as generation

    request = generation.Request(
        model=model, variant=variant, replicates=replicates,
        tasks=tuple(select(task_refs, tier, "core")),
        results=results, max_tokens=max_tokens, base_url=base_url, seeds=seeds,
        workers=workers, max_connections=max_connections, max_retries=max_retries,
        model_args=generation.parse_model_args(model_args), engine=engine)
    if dry_run:  # wrapped to the terminal, each line keeping its indent
        out.print(indented(printable(generation.make_plan(request).describe())))
        return
    outcome = generation.run(request)
    out.print(indented(printable(outcome.describe())))
    if outcome.grading is not None:
        from arrivalbench.cli.summary import summary_table

        out.print(summary_table(outcome.grading, out.width))




REPORT_EXTRA = ("matplotlib", "numpy")  # the distributions of the 'report' extra


# -- report --------------------------------------------------------------------------------------


@app.command()
@results_option("The results file to read (never written).", dir_okay=True)
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              default=Path("reports"), show_default=True,
              help="Folder for metrics.json, report.md, report.html, CSVs and figures.")
@click.option("--arm", "arms", multiple=True,
              help="Report only this arm (repeatable). Default: every arm in the file.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the bootstrap over tasks.")
@click.option("--compare", nargs=2, metavar="ARM_A ARM_B", default=None,
              help="Also the shift of every metric from ARM_A to ARM_B on their common tasks, "
                   "with paired intervals, and the cells whose class changed.")
@tier_option("all", "Report only the cells of this tier's tasks. Default: every tier, each "
                   "in a report of its own (in --out/<tier>/ when there are several).")
def report(results: Path, out_dir: Path, arms: Sequence[str], seed: int,
           compare: tuple[str, str] | None, tier: TierChoice | None) -> None:
    """Tables, figures and 95% intervals of the arms in a results file."""
    try:
        from arrivalbench import report as reporting
        from arrivalbench.report.terminal import (
            changed_lines,
            comparison_table,
            engine_table,
            notes,
            split_lines,
            summary_table,
        )
    except ImportError as exc:
        if not is_missing(exc, *REPORT_EXTRA):
            raise
        raise missing_extra("report", "report", exc.name) from None
    reports = reporting.write_tiers(results, out_dir, arms, seed, compare or (),
                                    tier or "all")
    for name, written in reports:
        if len(reports) > 1:
            out.print(f"[bold]tier {name}[/bold]")
        doc = printable_doc(written.doc)
        out.print(summary_table(doc))
        if compare:
            out.print(comparison_table(doc))
            for line in changed_lines(doc):
                click.echo(line)
        if "engine_comparison" in doc:
            out.print(engine_table(doc))
            for line in split_lines(doc):
                out.print(line, soft_wrap=False, markup=False, highlight=False)
        for line in notes(doc):  # wrapped at word boundaries, not cut by the terminal
            out.print(f"[yellow]note:[/yellow] {escape(line)}", soft_wrap=False)
        out.print(f"wrote {len(written.files)} files to {written.out}: metrics.json, report.md, "
                  f"report.html, CSVs, figures/", soft_wrap=False)
