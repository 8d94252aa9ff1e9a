"""What `arrivalbench generate` is asked for: the request, its validation, and Inspect's
`-M KEY=VALUE` model arguments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arrivalbench.core.engine import DEFAULT_ENGINE, EngineName, check_engine
from arrivalbench.core.grading import DEFAULT_SEEDS, check_seeds
from arrivalbench.corpus.prompts import DEFAULT_VARIANT, MAX_TURNS, VARIANTS
from arrivalbench.errors import ArrivalBenchError, ParameterError

DEFAULT_MAX_TOKENS = 8000


@dataclass(frozen=True)
class Request:
    model: str
    variant: str = DEFAULT_VARIANT
    replicates: int = 1
    tasks: tuple[str, ...] = ()  # built-in ids or task folders; empty: every built-in task
    results: Path = Path("results") / "arrivalbench.duckdb"
    max_tokens: int = DEFAULT_MAX_TOKENS
    base_url: str | None = None
    max_turns: int = MAX_TURNS
    seeds: int = DEFAULT_SEEDS
    workers: int | None = None
    max_connections: int | None = None
    max_retries: int | None = None  # Inspect's default: retry until its own timeout
    model_args: dict[str, Any] = field(default_factory=dict)  # Inspect's -M KEY=VALUE
    engine: EngineName = DEFAULT_ENGINE  # the prompt names it; scripts are tested and graded there

    @property
    def arm(self) -> str:
        """`<model>:<variant>`, and on another engine `<model>:<variant>@<engine>`: its prompt
        differs, and its turns and transcripts must not replace the DuckDB arm's."""
        suffix = "" if self.engine == DEFAULT_ENGINE else f"@{self.engine}"
        return f"{self.model}:{self.variant}{suffix}"

    @property
    def log_dir(self) -> Path:
        return self.results.parent / f"{self.results.stem}.inspect-logs"


def check(request: Request) -> None:
    check_engine(request.engine)
    if "/" not in request.model:
        raise ArrivalBenchError(f"model {request.model}: give PROVIDER/MODEL as Inspect AI "
                                "names it, e.g. openai/gpt-4o, anthropic/claude-sonnet-4-0, "
                                "mockllm/model")
    if request.variant not in VARIANTS:
        raise ArrivalBenchError(f"prompt variant {request.variant!r}: unknown; allowed: "
                                f"{', '.join(VARIANTS)}")
    for name, value in (("replicates", request.replicates), ("max tokens",
                        request.max_tokens)):
        if value < 1:
            raise ArrivalBenchError(f"{name} {value}: give a whole number of at least 1")
    check_seeds(request.seeds)


def parse_model_args(pairs: Sequence[str]) -> dict[str, Any]:
    """`KEY=VALUE` pairs as Inspect's `-M` reads them: values as YAML scalars (true, 3, 0.5)."""
    import yaml

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ParameterError("model_args", pair, "give KEY=VALUE, e.g. responses_api=true")
        try:
            out[key.strip()] = yaml.safe_load(value) if value.strip() else ""
        except yaml.YAMLError:
            out[key.strip()] = value
    return out
