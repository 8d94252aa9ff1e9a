"""Idiom signatures: features read from a pipeline's SQL, so that a mediating
variable such as the in-batch dedup guard can be related to verdicts.

`signature(sql)` reads a DuckDB script with sqlglot and returns the sorted tags it finds:

- `history_table`: delivered records (or their record keys) are appended to a persistent table:
  an INSERT without DO UPDATE or OR REPLACE, of rows read from the batch and not aggregated;
- `anti_join`: rows are kept only if they have no match in a persistent table: NOT EXISTS,
  NOT IN (subquery), ANTI JOIN, LEFT JOIN ... IS NULL, EXCEPT;
- `batch_dedup`: a guard against repeated records inside one batch: DISTINCT (ON), a
  ROW_NUMBER/RANK window kept where it is 1 (QUALIFY ... = 1, or WHERE rn = 1 outside), or a
  GROUP BY that only picks values (ANY_VALUE, FIRST, MAX, ARG_MAX, ...), over rows read from
  the batch;
- `upsert`: ON CONFLICT, INSERT OR REPLACE / OR IGNORE, MERGE, and DELETE of the rows that
  match the batch followed by an INSERT from the batch;
- `watermark_filter`: rows are compared (<, <=, >, >=) with the maximum of a column already
  stored, or with a value kept in a table named like a watermark;
- `select_star`: a `*` (or `t.*`, `COLUMNS(*)`) in a projection; `count(*)` does not count;
- `full_recompute`: a table rebuilt whole from a persistent table: CREATE OR REPLACE TABLE/VIEW
  ... AS SELECT reading one, or DELETE without WHERE / TRUNCATE / DROP followed by a refill
  from one;
- `transaction`: the script opens its own transaction (BEGIN / START TRANSACTION);
- `unparsed`: some statement could not be read by sqlglot; the other tags cover the rest.

"Read from the batch" means from schema `incoming`, or from a CTE, temporary table or view
derived from it; every other table is persistent. Statements are split by DuckDB's own parser
(the runner's split), each then read by sqlglot in the DuckDB dialect.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

TAGS = ("anti_join", "batch_dedup", "full_recompute", "history_table", "select_star",
        "transaction", "unparsed", "upsert", "watermark_filter")

_PICKS = (exp.AnyValue, exp.First, exp.Last, exp.Max, exp.Min, exp.ArgMax, exp.ArgMin)
_RANKS = (exp.RowNumber, exp.Rank, exp.DenseRank)
_COMPARE = (exp.GT, exp.GTE, exp.LT, exp.LTE)
_WATERMARK_NAME = re.compile(r"water|hwm|checkpoint|last_(?:load|seen|run|processed)|cursor|"
                             r"^wm$|^wm_|_wm$", re.IGNORECASE)
_BEGIN = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*(?:begin|start)\b",
                    re.IGNORECASE | re.DOTALL)


@dataclass
class _Reader:
    tags: set[str] = field(default_factory=set)
    batch: set[str] = field(default_factory=set)  # temp tables, views, CTEs whose rows are batch
    touched: set[str] = field(default_factory=set)  # ... whose definition reads the batch at all
    guarded: set[str] = field(default_factory=set)  # batch relations already deduplicated
    temporary: set[str] = field(default_factory=set)  # temp tables and views
    cleared: set[str] = field(default_factory=set)  # emptied or dropped, not yet refilled
    replaced: set[str] = field(default_factory=set)  # rows matching the batch deleted
    ctes: dict[str, exp.Expr] = field(default_factory=dict)  # of the statement being read

    # -- relations -----------------------------------------------------------------------------

    def is_batch(self, table: exp.Table) -> bool:
        return table.db.lower() == "incoming" or (not table.db and
                                                  table.name.lower() in self.batch)

    def tables(self, node: object) -> Iterator[exp.Table]:
        if isinstance(node, exp.Expr):
            yield from (t for t in node.find_all(exp.Table) if t.name)

    def reads_batch(self, node: object) -> bool:
        """Anything in `node` reads the batch, if only in a filter."""
        return any(self.is_batch(t) or (not t.db and t.name.lower() in self.touched)
                   for t in self.tables(node))

    def reads_persistent(self, node: object) -> bool:
        return any(not self.is_batch(t) for t in self.tables(node))

    def direct_sources(self, select: exp.Select) -> list[exp.Expr]:
        from_ = select.args.get("from_") or select.args.get("from")
        sources = [from_.this] if isinstance(from_, exp.From) else []
        sources += [j.this for j in select.args.get("joins") or []]
        return sources

    def contributes(self, select: exp.Select, source: exp.Expr) -> bool:
        """Some of the select's output comes from `source`: it is the only source, a `*`
        takes it, or a projected column names it or is unqualified. A source joined only to
        choose rows (every projected column qualified by another) contributes nothing."""
        if len(self.direct_sources(select)) == 1:
            return True
        names = {source.alias_or_name.lower()}
        if isinstance(source, exp.Table):
            names.add(source.name.lower())
        for projection in select.expressions:
            if isinstance(projection, exp.Star):
                return True
            for column in projection.find_all(exp.Column):
                if not column.table or column.table.lower() in names:
                    return True
        return False

    def selects_batch(self, select: exp.Select) -> bool:
        """The select's own FROM and JOINs read the batch (directly or via a subquery) and
        its output takes from it."""
        return any(((isinstance(source, exp.Table) and self.is_batch(source)) or
                    (not isinstance(source, exp.Table) and self.rows_from_batch(source))) and
                   self.contributes(select, source)
                   for source in self.direct_sources(select))

    def rows_from_batch(self, source: object) -> bool:
        """The rows themselves come from the batch (not merely filtered by it)."""
        if isinstance(source, exp.Subquery):
            return self.rows_from_batch(source.this)
        if isinstance(source, exp.SetOperation):
            return self.rows_from_batch(source.this) or self.rows_from_batch(source.expression)
        return isinstance(source, exp.Select) and self.selects_batch(source)

    def row_selects(self, source: object, seen: frozenset[str] = frozenset()
                    ) -> Iterator[exp.Select]:
        """The selects the rows of `source` flow through: it, its FROM and JOIN subqueries and
        CTEs, recursively; never a subquery that only filters."""
        if isinstance(source, exp.Subquery):
            yield from self.row_selects(source.this, seen)
        elif isinstance(source, exp.SetOperation):
            yield from self.row_selects(source.this, seen)
            yield from self.row_selects(source.expression, seen)
        elif isinstance(source, exp.Select):
            yield source
            for inner in self.direct_sources(source):
                name = inner.name.lower() if isinstance(inner, exp.Table) and not inner.db \
                    else ""
                if name in self.ctes and name not in seen:
                    yield from self.row_selects(self.ctes[name], seen | {name})
                elif not isinstance(inner, exp.Table):
                    yield from self.row_selects(inner, seen)

    # -- statements ----------------------------------------------------------------------------

    def read(self, statement: exp.Expr) -> None:
        self.ctes = {}
        added: set[str] = set()
        for cte in statement.find_all(exp.CTE):
            name = cte.alias_or_name.lower()
            self.ctes[name] = cte.this
            if name in self.batch | self.touched:
                continue
            if self.rows_from_batch(cte.this):
                self.batch.add(name)
                added.add(name)
            if self.reads_batch(cte.this):
                self.touched.add(name)
                added.add(name)
        try:
            self.statement(statement)
        finally:  # CTE names are in scope for this statement only
            self.batch -= added
            self.touched -= added
            self.guarded -= added
            self.ctes = {}

    def statement(self, statement: exp.Expr) -> None:
        for select in statement.find_all(exp.Select):
            self.select(select)
        for comparison in statement.find_all(*_COMPARE):
            if self.is_watermark(comparison):
                self.tags.add("watermark_filter")
        for negation in statement.find_all(exp.Not):
            if self.negates_stored(negation):
                self.tags.add("anti_join")
        for difference in statement.find_all(exp.Except):
            if self.reads_persistent(difference.expression):
                self.tags.add("anti_join")
        if isinstance(statement, exp.Merge):
            self.tags.add("upsert")
            if self.is_guarded(statement.args.get("using")):
                self.tags.add("batch_dedup")
        elif isinstance(statement, exp.Insert):
            self.insert(statement)
        elif isinstance(statement, exp.Create):
            self.create(statement)
        elif isinstance(statement, exp.Delete):
            name = statement.this.name.lower()
            if not statement.args.get("where"):
                self.cleared.add(name)
            elif self.reads_batch(statement.args["where"]) or \
                    self.reads_batch(statement.args.get("using")):
                self.replaced.add(name)  # DELETE by the batch's keys, then INSERT: an upsert
        elif isinstance(statement, exp.TruncateTable):
            self.cleared.update(t.name.lower() for t in statement.expressions)
        elif isinstance(statement, exp.Drop):
            self.cleared.update(t.name.lower() for t in statement.args.get("tables") or []
                                if isinstance(t, exp.Table))
        elif isinstance(statement, exp.Transaction):
            self.tags.add("transaction")

    def select(self, select: exp.Select) -> None:
        for projection in select.expressions:
            if isinstance(projection, exp.Star) or (
                    isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
            ) or (isinstance(projection, exp.Columns) and isinstance(projection.this, exp.Star)):
                self.tags.add("select_star")
        for join in select.args.get("joins") or []:
            anti = join.args.get("kind", "").upper() == "ANTI" and \
                self.reads_persistent(join.this)
            if anti or (join.args.get("side", "").upper() == "LEFT" and
                        self.left_anti(select, join)):
                self.tags.add("anti_join")

    # -- the in-batch guard --------------------------------------------------------------------

    def is_guarded(self, source: object) -> bool:
        """The rows of `source` pass a guard against repeated batch records on their way:
        DISTINCT (ON) or a GROUP BY that only picks values over the batch, a ROW_NUMBER/RANK
        over the batch kept where it is 1, or a batch relation guarded before."""
        selects = list(self.row_selects(source))
        for select in selects:
            if self.selects_batch(select) and (select.args.get("distinct") or (
                    select.args.get("group") is not None and self.only_picks(select))):
                return True
            if any(isinstance(t, exp.Table) and not t.db and t.name.lower() in self.guarded
                   and self.contributes(select, t) for t in self.direct_sources(select)):
                return True
        return self.first_of_rank(selects)

    def only_picks(self, select: exp.Select) -> bool:
        """No aggregate but ones that pick a value (window functions aside)."""
        for projection in select.expressions:
            for agg in projection.find_all(exp.AggFunc):
                if not isinstance(agg, _PICKS) and not isinstance(agg.parent, exp.Window):
                    return False
        return True

    def first_of_rank(self, selects: list[exp.Select]) -> bool:
        """A ROW_NUMBER/RANK over rows read from the batch, kept only where it is 1: in a
        QUALIFY, or through its alias in an outer WHERE (a numbering alone is no guard)."""
        windows: list[exp.Window] = []
        aliases: set[str] = set()
        for select in selects:
            if not self.selects_batch(select):
                continue
            for window in select.find_all(exp.Window):
                if isinstance(window.this, _RANKS) and window.parent_select is select:
                    windows.append(window)
                    if isinstance(window.parent, exp.Alias):
                        aliases.add(window.parent.alias.lower())
        if not windows:
            return False
        filters = [f for s in selects for f in (s.args.get("qualify"), s.args.get("where"))
                   if f is not None]
        for test in (t for f in filters for t in f.find_all(exp.EQ, exp.LTE, exp.LT)):
            for ranked, bound in ((test.this, test.expression), (test.expression, test.this)):
                if not isinstance(bound, exp.Literal) or bound.is_string:
                    continue
                if bound.this != ("2" if isinstance(test, exp.LT) else "1"):
                    continue
                if (isinstance(ranked, exp.Window) and any(ranked is w for w in windows)) or \
                        (isinstance(ranked, exp.Column) and ranked.name.lower() in aliases):
                    return True
        return False

    # -- other idioms --------------------------------------------------------------------------

    def left_anti(self, select: exp.Select, join: exp.Join) -> bool:
        """LEFT JOIN persistent AS p ... WHERE p.col IS NULL."""
        if not isinstance(join.this, exp.Table) or self.is_batch(join.this):
            return False
        names = {join.this.alias_or_name.lower(), join.this.name.lower()}
        where = select.args.get("where")
        if where is None:
            return False
        for test in where.find_all(exp.Is):
            column = test.this
            if isinstance(test.expression, exp.Null) and isinstance(column, exp.Column) and \
                    column.table.lower() in names and not isinstance(test.parent, exp.Not):
                return True
        return False

    def negates_stored(self, node: exp.Not) -> bool:
        """NOT EXISTS (... persistent ...) or NOT IN (SELECT ... persistent ...)."""
        inner = node.this
        if isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Exists):
            return self.reads_persistent(inner.this)
        query = inner.args.get("query") if isinstance(inner, exp.In) else None
        return query is not None and self.reads_persistent(query)

    def is_watermark(self, node: exp.Expr) -> bool:
        for side in (node.this, node.expression):
            for sub in side.find_all(exp.Subquery, exp.Select):
                select = sub.this if isinstance(sub, exp.Subquery) else sub
                if not isinstance(select, exp.Select) or not self.reads_persistent(select):
                    continue
                if any(isinstance(a, exp.Max | exp.ArgMax) for p in select.expressions
                       for a in p.find_all(exp.AggFunc)):
                    return True
                if any(_WATERMARK_NAME.search(t.name) for t in self.tables(select)):
                    return True
            for column in side.find_all(exp.Column):
                if _WATERMARK_NAME.search(column.table or ""):
                    return True
        return False

    # -- writes --------------------------------------------------------------------------------

    def insert(self, insert: exp.Insert) -> None:
        target = insert.this.this if isinstance(insert.this, exp.Schema) else insert.this
        name = target.name.lower() if isinstance(target, exp.Table) else ""
        source = insert.expression
        conflict = insert.args.get("conflict")
        alternative = str(insert.args.get("alternative") or "").upper()
        if conflict is not None or alternative in ("REPLACE", "IGNORE"):
            self.tags.add("upsert")
        if name in self.replaced and self.reads_batch(source):
            self.tags.add("upsert")
        updates = alternative == "REPLACE" or (
            conflict is not None and "UPDATE" in str(conflict.args.get("action") or "").upper())
        staging = name in self.temporary or (name in self.cleared and
                                             not self.reads_persistent(source))
        if staging:  # a table that holds this batch's records again
            self.mark(name, source)
        else:
            if self.is_guarded(source):
                self.tags.add("batch_dedup")
            if name and not updates and self.rows_from_batch(source) and \
                    not self.aggregates(source):
                self.tags.add("history_table")
        if name in self.cleared and self.reads_persistent(source):
            self.tags.add("full_recompute")
        self.cleared.discard(name)

    def mark(self, name: str, query: object) -> None:
        """Record what a temporary or staging relation holds."""
        if self.rows_from_batch(query):
            self.batch.add(name)
            if self.is_guarded(query):
                self.guarded.add(name)
        if self.reads_batch(query):
            self.touched.add(name)

    def aggregates(self, source: exp.Expr | None) -> bool:
        if source is None:
            return False
        selects = [source] if isinstance(source, exp.Select) else list(
            source.find_all(exp.Select))
        outer = selects[0] if selects else None
        return outer is not None and not self.only_picks(outer)

    def create(self, create: exp.Create) -> None:
        kind = str(create.args.get("kind") or "").upper()
        table = create.this.this if isinstance(create.this, exp.Schema) else create.this
        if not isinstance(table, exp.Table):
            return
        name = table.name.lower()
        properties = create.args.get("properties")
        temporary = properties is not None and any(
            isinstance(p, exp.TemporaryProperty) for p in properties.expressions)
        query = create.expression
        if kind == "VIEW" or temporary:
            self.temporary.add(name)
            self.mark(name, query)
            if kind == "VIEW" and not temporary and not self.reads_batch(query) and \
                    self.reads_persistent(query):
                self.tags.add("full_recompute")  # the target as a view over what is stored
            return
        if kind != "TABLE" or query is None:
            return
        for names in (self.batch, self.touched, self.guarded):
            names.discard(name)
        if self.is_guarded(query):
            self.tags.add("batch_dedup")
        rebuilt = bool(create.args.get("replace")) or (name in self.cleared and
                                                        not create.args.get("exists"))
        if rebuilt and self.reads_persistent(query):
            self.tags.add("full_recompute")
        elif rebuilt and self.reads_batch(query):
            self.mark(name, query)  # a staging table rebuilt from each batch
        self.cleared.discard(name)


def _statements(sql: str) -> list[tuple[str, bool]]:
    """(text, is a transaction statement) for each statement, split by DuckDB's parser; on a
    script DuckDB cannot parse, by semicolons."""
    import duckdb

    try:
        parsed = duckdb.connect(":memory:").extract_statements(sql)
        return [(s.query, s.type == duckdb.StatementType.TRANSACTION) for s in parsed]
    except Exception:  # the parser raises non-DuckDB errors on odd input too
        return [(part, False) for part in sql.split(";") if part.strip()]


def signature(sql: str) -> list[str]:
    """The sorted idiom tags of a DuckDB script (see the module docstring)."""
    reader = _Reader()
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # sqlglot warns when it falls back to a Command
    try:
        for text, is_transaction in _statements(sql):
            if is_transaction:
                if _BEGIN.match(text):
                    reader.tags.add("transaction")
                continue
            try:
                statement = sqlglot.parse_one(text, read="duckdb")
            except (sqlglot.errors.ParseError, sqlglot.errors.TokenError, ValueError):
                reader.tags.add("unparsed")
                continue
            if isinstance(statement, exp.Command) or statement is None:
                reader.tags.add("unparsed")
                continue
            try:
                reader.read(statement)
            except Exception:  # a tree shape this reader does not know: say so, never crash
                reader.tags.add("unparsed")
    finally:
        logger.setLevel(level)
    return sorted(reader.tags)
