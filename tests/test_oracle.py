"""The oracle: pure comparisons of engine Tables against a declared target."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from arrivalbench.core.engine import Table
from arrivalbench.core.oracle import EXAMPLES, compare, conform
from arrivalbench.core.task import Column, Target

TARGET = Target(
    name="t",
    columns=(Column("id", "BIGINT"), Column("score", "DOUBLE"), Column("price", "DECIMAL(10,2)"),
             Column("day", "DATE"), Column("name", "VARCHAR")),
    key=("id",),
    tolerance=1e-9,
)
DECLARED = tuple((c.name, c.type) for c in TARGET.columns)

ROWS = (
    (1, 0.5, Decimal("10.00"), dt.date(2024, 1, 1), "a"),
    (2, 1.25, Decimal("0.10"), dt.date(2024, 1, 2), None),
    (3, None, None, None, "c"),
    (4, 1e6, Decimal("99999999.99"), dt.date(2024, 2, 29), "d"),
)


def table(rows: tuple[tuple[object, ...], ...] | list[tuple[object, ...]],
          columns: tuple[tuple[str, str], ...] = DECLARED) -> Table:
    return Table(columns, tuple(rows))


def with_value(row: tuple[object, ...], index: int, value: object) -> tuple[object, ...]:
    return (*row[:index], value, *row[index + 1:])


EXPECTED = table(ROWS)


def test_identical_tables_pass() -> None:
    diff = compare(EXPECTED, table(ROWS), TARGET)
    assert diff.ok and diff.document() == {}


def test_row_order_does_not_matter() -> None:
    assert compare(EXPECTED, table(tuple(reversed(ROWS))), TARGET).ok


def test_rows_are_a_multiset() -> None:
    diff = compare(EXPECTED, table((*ROWS, ROWS[1], ROWS[1])), TARGET)
    assert not diff.ok
    assert diff.counts == {"missing": 0, "extra": 0, "duplicated": 2, "changed": 0}
    assert diff.examples == {"duplicated": [{"key": {"id": 2}, "copies": 2}]}
    assert diff.rows == {"expected": 4, "got": 6}
    # and the other way round: the reference holds a row twice, the pipeline once
    twice = table((*ROWS, ROWS[0]))
    diff = compare(twice, table(ROWS), TARGET)
    assert diff.counts["missing"] == 1 and diff.examples["missing"] == [{"key": {"id": 1}}]


def test_column_names_compare_case_insensitively() -> None:
    shouted = tuple((name.upper(), kind) for name, kind in DECLARED)
    assert compare(EXPECTED, table(ROWS, shouted), TARGET).ok
    # and in any order
    reordered = tuple(reversed(DECLARED))
    assert compare(EXPECTED, table([tuple(reversed(r)) for r in ROWS], reordered), TARGET).ok


def test_lossless_casts_compare_as_the_declared_type() -> None:
    got_columns = (("id", "DOUBLE"), ("score", "BIGINT"), ("price", "DOUBLE"),
                   ("day", "TIMESTAMP"), ("name", "VARCHAR"))
    got = [(float(r[0]),  # DOUBLE 3.0 is BIGINT 3
            r[1],
            None if r[2] is None else float(r[2]),  # 10.0 is DECIMAL 10.00
            None if r[3] is None else dt.datetime.combine(r[3], dt.time()),  # midnight is a date
            r[4]) for r in ROWS]
    assert compare(EXPECTED, table(got, got_columns), TARGET).ok
    assert conform(3.0, "BIGINT") == 3 and isinstance(conform(3.0, "BIGINT"), int)
    assert conform(Decimal("3.00"), "INTEGER") == 3
    assert conform(3.5, "BIGINT") == 3.5
    assert conform(12.5, "DECIMAL(10,2)") == Decimal("12.5")
    assert conform(12.125, "DECIMAL(10,2)") == 12.125  # would lose a digit: left as it was
    assert conform(dt.datetime(2024, 1, 1, 0, 0, 1), "DATE") == dt.datetime(2024, 1, 1, 0, 0, 1)
    assert conform(dt.date(2024, 1, 1), "TIMESTAMP") == dt.datetime(2024, 1, 1)
    assert conform(True, "BIGINT") is True  # a boolean is not a number


def test_uuid_and_enum_values_compare_as_text() -> None:
    """A pipeline may keep an id as UUID or a code as ENUM: both cast losslessly to VARCHAR."""
    target = Target("t", (Column("event_id", "VARCHAR"), Column("kind", "VARCHAR")),
                    ("event_id",), 1e-9)
    ids = [uuid.UUID(int=i * 7919) for i in range(3)]
    expected = table([(str(i), "view") for i in ids], (("event_id", "VARCHAR"),
                                                       ("kind", "VARCHAR")))
    got = table([(i, "view") for i in reversed(ids)], (("event_id", "UUID"),
                                                       ("kind", "ENUM('view', 'click')")))
    diff = compare(expected, got, target)
    assert diff.ok, diff.document()
    wrong = table([(i, "click") for i in ids], got.columns)
    assert compare(expected, wrong, target).counts["changed"] == 3


def test_lossy_values_are_changed() -> None:
    got = [with_value(ROWS[0], 0, 1.0), with_value(ROWS[1], 3, dt.datetime(2024, 1, 2, 0, 0, 1)),
           *ROWS[2:]]
    got[0] = with_value(got[0], 2, Decimal("10.001"))
    diff = compare(EXPECTED, table(got), TARGET)
    assert diff.counts["changed"] == 2
    assert diff.examples["changed"] == [
        {"key": {"id": 1}, "column": "price", "got": "10.001", "expected": "10.00"},
        {"key": {"id": 2}, "column": "day", "got": "2024-01-02 00:00:01",
         "expected": "2024-01-02"},
    ]


def test_decimal_against_float_within_tolerance() -> None:
    got = [with_value(ROWS[0], 2, 10.000000000001), *ROWS[1:]]
    assert compare(EXPECTED, table(got), TARGET).ok
    got = [with_value(ROWS[0], 2, 10.01), *ROWS[1:]]
    assert not compare(EXPECTED, table(got), TARGET).ok


def test_approximate_columns_use_the_tolerance() -> None:
    expected = table([with_value(ROWS[0], 1, 0.3), *ROWS[1:]])
    close = table([with_value(ROWS[0], 1, 0.1 + 0.2), *ROWS[1:]])
    far = table([with_value(ROWS[0], 1, 0.3 * (1 + 1e-6)), *ROWS[1:]])
    assert compare(expected, close, TARGET).ok
    diff = compare(expected, far, TARGET)
    assert diff.examples["changed"][0]["column"] == "score"
    exact = Target(TARGET.name, TARGET.columns, TARGET.key, tolerance=0.0)
    assert not compare(expected, close, exact).ok
    # integers compare exactly, tolerance or not
    big = Target(TARGET.name, TARGET.columns, ("name",), tolerance=0.1)
    shifted = table([with_value(ROWS[0], 0, 2), *ROWS[1:]])
    assert not compare(EXPECTED, shifted, big).ok


def test_null_equals_null_and_nothing_else() -> None:
    assert compare(EXPECTED, table(ROWS), TARGET).ok  # row 3 is mostly NULL
    got = [*ROWS[:2], with_value(ROWS[2], 1, 0.0), ROWS[3]]
    diff = compare(EXPECTED, table(got), TARGET)
    assert diff.examples["changed"] == [
        {"key": {"id": 3}, "column": "score", "got": 0.0, "expected": None}]
    nan = [with_value(ROWS[0], 1, float("nan")), *ROWS[1:]]
    assert compare(table(nan), table(nan), TARGET).ok


def test_null_keys_align_and_sort() -> None:
    rows = [(None, 1.0, None, None, "x"), *ROWS, (None, 2.0, None, None, "y")]
    assert compare(table(rows), table(list(reversed(rows))), TARGET).ok
    diff = compare(table(rows), table(rows[1:]), TARGET)
    assert diff.counts["missing"] == 1 and diff.examples["missing"] == [{"key": {"id": None}}]
    got = [("7", 0.5, None, None, "s"), (None, 3.0, None, None, "x"), *ROWS[1:]]
    diff = compare(table(rows), table(got), TARGET)  # mixed key types and NULLs: no crash
    assert not diff.ok
    assert diff.examples["extra"] == [{"key": {"id": "7"}, "rows": 1}]


def test_typed_diff_kinds() -> None:
    got = [
        ROWS[0], ROWS[0],  # duplicated
        with_value(ROWS[1], 4, "b"),  # changed
        # ROWS[2] missing
        ROWS[3],
        (9, 0.0, Decimal("0.00"), dt.date(2024, 3, 1), "z"),  # extra
    ]
    diff = compare(EXPECTED, table(got), TARGET)
    assert diff.counts == {"missing": 1, "extra": 1, "duplicated": 1, "changed": 1}
    assert diff.examples == {
        "missing": [{"key": {"id": 3}}],
        "extra": [{"key": {"id": 9}, "rows": 1}],
        "duplicated": [{"key": {"id": 1}, "copies": 1}],
        "changed": [{"key": {"id": 2}, "column": "name", "got": "b", "expected": None}],
    }
    assert diff.schema == ()
    document = diff.document()
    assert set(document) == {"schema", "counts", "examples", "rows"}


def test_schema_problems() -> None:
    got_columns = (("ID", "BIGINT"), ("score", "VARCHAR"), ("price", "DECIMAL(18,3)"),
                   ("name", "VARCHAR"), ("extra_col", "INTEGER"))
    got = [(r[0], None if r[1] is None else str(r[1]), r[2], r[4], 0) for r in ROWS]
    diff = compare(EXPECTED, table(got, got_columns), TARGET)
    assert not diff.ok
    assert list(diff.schema) == [
        {"problem": "incompatible", "column": "score", "got": "VARCHAR", "expected": "DOUBLE"},
        {"problem": "missing", "column": "day", "expected": "DATE"},
        {"problem": "extra", "column": "extra_col", "got": "INTEGER"},
    ]
    # a missing key column: schema problems only, rows cannot be aligned
    no_key = compare(EXPECTED, table([r[1:] for r in ROWS], DECLARED[1:]), TARGET)
    assert no_key.schema == ({"problem": "missing", "column": "id", "expected": "BIGINT"},)
    assert not no_key.ok and no_key.counts == {}


def test_examples_are_few_and_in_key_order() -> None:
    expected = table([(i, 1.0, None, None, None) for i in range(20)])
    shuffled = [(i, 2.0, None, None, None) for i in range(20)]
    random.Random(3).shuffle(shuffled)
    first = compare(expected, table(shuffled), TARGET)
    shuffled.reverse()
    second = compare(expected, table(shuffled), TARGET)
    assert first == second
    assert first.counts["changed"] == 20
    assert [e["key"]["id"] for e in first.examples["changed"]] == list(range(EXAMPLES))


# -- properties ----------------------------------------------------------------------------------

values = {
    "id": st.one_of(st.none(), st.integers(-3, 12)),
    "score": st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=False, width=64)),
    "price": st.one_of(st.none(), st.decimals(-1000, 1000, places=2, allow_nan=False)),
    "day": st.one_of(st.none(), st.dates(dt.date(2020, 1, 1), dt.date(2030, 1, 1))),
    "name": st.one_of(st.none(), st.text(max_size=3)),
}
rows_strategy = st.lists(st.tuples(*values.values()), max_size=25)
row_strategy = st.tuples(*values.values())


@settings(deadline=None, max_examples=150)
@given(rows_strategy, st.randoms(use_true_random=False))
def test_a_shuffled_table_always_passes(rows: list[tuple[object, ...]],
                                        rnd: random.Random) -> None:
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    assert compare(table(rows), table(shuffled), TARGET).ok


@settings(deadline=None, max_examples=150)
@given(rows_strategy.filter(bool), st.data())
def test_removing_a_row_is_always_detected(rows: list[tuple[object, ...]],
                                           data: st.DataObject) -> None:
    index = data.draw(st.integers(0, len(rows) - 1))
    diff = compare(table(rows), table(rows[:index] + rows[index + 1:]), TARGET)
    assert not diff.ok
    assert diff.counts["missing"] >= 1 or diff.counts["changed"] >= 1


@settings(deadline=None, max_examples=150)
@given(rows_strategy, row_strategy, st.randoms(use_true_random=False))
def test_adding_a_row_is_always_detected(rows: list[tuple[object, ...]],
                                         extra: tuple[object, ...], rnd: random.Random) -> None:
    got = [*rows, extra]
    rnd.shuffle(got)
    diff = compare(table(rows), table(got), TARGET)
    assert not diff.ok
    assert diff.counts["extra"] + diff.counts["duplicated"] >= 1
    assert diff.rows == {"expected": len(rows), "got": len(rows) + 1}
