"""A dbt model's full refresh as one query over its sources (`dbt.inline`): pure, on SQL as
dbt compiles it, and run on DuckDB to show the query returns what the models build."""

from __future__ import annotations

import duckdb
import pytest

from arrivalbench.core.artifacts.dbt.inline import Compiled, NotInlined, inlined

STAGED = Compiled(("main", "stg_orders"), """
-- staged: one row per order
select order_id, amount from "replay"."raw"."orders"
qualify row_number() over (partition by order_id order by amount desc) = 1""")
DAILY = Compiled(("marts", "store_totals"), """
with s as (select * from "replay"."main"."stg_orders")
select o.store_id, sum(s.amount) as total
from s join "replay"."raw"."stores" as o on o.order_id = s.order_id
group by all""")
SOURCES = {"orders": ("raw", "orders"), "order_stores": ("raw", "stores")}


def test_a_chain_of_models_is_one_query_over_the_sources_by_name() -> None:
    query = inlined([DAILY, STAGED], ("marts", "store_totals"), SOURCES, "replay")
    assert '"replay"' not in query and "raw" not in query
    con = duckdb.connect()
    con.execute("create table orders as select * from (values (1, 5), (1, 7), (2, 3)) "
                "t(order_id, amount)")
    con.execute("create table order_stores as select * from (values (1, 10), (2, 10)) "
                "t(order_id, store_id)")
    # Parents come first whatever order dbt reported them in; the alias `o` still reads.
    assert con.execute(query).fetchall() == [(10, 10)]


@pytest.mark.parametrize(("models", "says"), [
    ([STAGED], "dbt compiled no SQL for marts.store_totals"),
    ([DAILY], "marts.store_totals reads main.stg_orders, neither a source nor a model"),
    ([Compiled(("marts", "store_totals"), "delete from x")], "is not a SELECT"),
    ([Compiled(("marts", "store_totals"), "select * from (")], "sqlglot cannot parse"),
    ([Compiled(("marts", "store_totals"), 'select * from "replay"."main"."b"'),
      Compiled(("main", "b"), 'select * from "replay"."marts"."store_totals"')], "a cycle"),
])
def test_what_is_not_one_query_says_why(models: list[Compiled], says: str) -> None:
    with pytest.raises(NotInlined, match=says):
        inlined(models, ("marts", "store_totals"), SOURCES, "replay")
