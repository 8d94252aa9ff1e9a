"""The metric definitions exist once: docs/metrics.md is generated from them, and every key of
metrics.json is documented there."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arrivalbench.report.definitions import KEYS, markdown_doc

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "metrics.md"


def test_docs_metrics_md_is_generated_from_the_definitions() -> None:
    if os.environ.get("ARRIVALBENCH_UPDATE_GOLDEN") == "1":
        DOC.write_text(markdown_doc(), encoding="utf-8")
    assert DOC.read_text(encoding="utf-8") == markdown_doc(), (
        "docs/metrics.md is out of date; regenerate with ARRIVALBENCH_UPDATE_GOLDEN=1")


def patterns() -> list[re.Pattern[str]]:
    """Each documented key as a regular expression over dotted paths: `*` matches one name,
    `a, b` and `a|b` are alternatives of one part."""
    out = []
    for key, _ in KEYS:
        parts = key.split(".")
        regex = r"\.".join(r"[^.]+" if p == "*" else
                           "(?:" + "|".join(re.escape(x) for x in re.split(r", |\|", p)) + ")"
                           for p in parts)
        out.append(re.compile(regex))
    return out


# documented as a whole: their fields are listed in the documentation of the key itself
WHOLE = re.compile(r"arms\.[^.]+\.(?:cells|spread)|no_scripts|comparison\.(?:metrics|cells)")
METRIC_FIELDS = {"value", "low", "high", "n"}


def undocumented(node: Any, regexes: list[re.Pattern[str]],
                 prefix: tuple[str, ...] = ()) -> Iterator[str]:
    for key, value in node.items():
        path = ".".join((*prefix, key))
        if not any(r.fullmatch(path) for r in regexes):
            yield path
        is_metric = isinstance(value, dict) and set(value) == METRIC_FIELDS
        if isinstance(value, dict) and not is_metric and not WHOLE.fullmatch(path):
            yield from undocumented(value, regexes, (*prefix, key))


def test_every_metrics_json_key_is_documented(tmp_path: Path) -> None:
    from arrivalbench import report
    from test_report_golden import build_golden

    written = report.write(build_golden(tmp_path / "r.duckdb"), tmp_path / "out",
                           compare=("alpha", "m:unhinted"))
    doc = json.loads((written.out / "metrics.json").read_text(encoding="utf-8"))
    assert list(undocumented(doc, patterns())) == []


def test_the_check_finds_an_undocumented_key() -> None:
    doc = {"arms": {"x": {"gap": {"value": 1, "low": 1, "high": 1, "n": 1},
                          "mystery": {"value": 1, "low": 1, "high": 1, "n": 1}}}}
    assert list(undocumented(doc, patterns())) == ["arms.x.mystery"]
