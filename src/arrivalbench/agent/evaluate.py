"""The Inspect eval call of `generate`: the model's arguments, one `inspect_ai.eval` over the
samples a plan lacks, and what its logs say about how the run ended."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arrivalbench.agent.plan import Plan
from arrivalbench.agent.request import Request
from arrivalbench.agent.samples import sample_id
from arrivalbench.core.task import source_of
from arrivalbench.errors import ArrivalBenchError, is_missing, missing_extra

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog
    from inspect_ai.util import DisplayType


def require_inspect() -> None:
    """Inspect AI is installed (the `agent` extra), or a one-line error saying how to get it."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        if not is_missing(exc, "inspect_ai", "openai"):
            raise
        raise missing_extra("generate", "agent", "inspect-ai") from None


def model_arguments(request: Request, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `-M` arguments of the request, `extra` over them, and the ones a model needs."""
    from arrivalbench.agent.inspect_task import mock_outputs

    model_args = {**request.model_args, **(extra or {})}
    if request.model.startswith("mockllm/") and "custom_outputs" not in model_args:
        model_args["custom_outputs"] = mock_outputs()
    if request.base_url and request.model.startswith("openai/"):
        # An OpenAI-compatible server (vLLM, llama.cpp, Ollama, a gateway) speaks the chat
        # completions API; Inspect would send an unknown model name to the Responses API.
        model_args.setdefault("responses_api", False)
    return model_args


def evaluate(plan: Plan, model_args: dict[str, Any],
             display: DisplayType | None = None) -> list[EvalLog]:
    """Run the plan's samples through `inspect_ai.eval` (no scorer: grading comes after)."""
    import inspect_ai
    from inspect_ai._util.error import PrerequisiteError

    from arrivalbench.agent.inspect_task import arrivalbench

    request = plan.request
    wanted = {spec.id for spec, _ in plan.todo}
    task = arrivalbench(tasks=[source_of(spec) for spec in plan.specs if spec.id in wanted],
                        variant=request.variant, seeds=request.seeds,
                        max_turns=request.max_turns, replicates=request.replicates,
                        engine=request.engine)
    options: dict[str, Any] = {}
    if request.max_connections is not None:
        options["max_connections"] = request.max_connections
    if request.max_retries is not None:
        options["max_retries"] = request.max_retries
    try:
        return inspect_ai.eval(
            task, model=request.model, model_base_url=request.base_url,
            model_args=model_args, log_dir=str(_log_dir(request)),
            sample_id=[sample_id(spec.id, r) for spec, r in plan.todo],
            max_tokens=request.max_tokens, score=False, fail_on_error=False,
            display=display, tags=["arrivalbench", request.variant],
            metadata={"arm": request.arm, "results": str(request.results)}, **options)
    except (PrerequisiteError, ValueError) as exc:
        # What Inspect raises for a model it cannot set up: a missing API key or provider
        # package (PrerequisiteError), a provider it does not know (ValueError). Anything
        # else is not a problem with the model's name and keeps its traceback.
        raise ArrivalBenchError(f"model {request.model}: {_first_line(exc)}") from None


def check_finished(logs: Sequence[EvalLog], stored: int) -> None:
    """An Inspect run that ended in error or was cancelled stops `generate`, once the samples
    it finished (`stored` of them) are in the results file."""
    for log in logs:
        if log.status in ("error", "cancelled"):
            why = log.error.message.strip().splitlines()[0] if log.error else log.status
            raise ArrivalBenchError(f"the Inspect run ended {log.status} ({why}); samples it "
                                    f"finished and stored: {stored}; run the same "
                                    f"command again to resume (log: {log.location})")


def _log_dir(request: Request) -> Path:
    folder = request.log_dir
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Inspect AI logs of arrivalbench generate: not for version control\n"
                          "*\n", encoding="utf-8")
    return folder


def _first_line(exc: BaseException) -> str:
    """The first line of an Inspect error, without its console markup."""
    text = re.sub(r"\[/?[a-z ]+\]", "", str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__
