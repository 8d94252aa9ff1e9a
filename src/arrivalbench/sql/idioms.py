"""Idiom signatures: features read from a pipeline's SQL, judged against its task, so that a
mediating variable such as the in-batch dedup guard can be related to verdicts.

`signature(sql, spec)` reads a DuckDB script with sqlglot and returns the sorted tags it finds.
The task tells each source's columns and record key; the tags that speak of records are judged
on how the batch's rows and columns flow into persistent writes:

- `history_table`: a persistent table receives delivered records with their record key among
  the written columns (the keys alone are enough): an INSERT of rows read from the batch and not
  aggregated, or a MERGE that inserts them. An upsert counts only when it is keyed on the record
  key (ON CONFLICT, the target's declared primary key for INSERT OR REPLACE, MERGE ... ON);
  one keyed on anything else keeps one row per entity, not the records;
- `anti_join`: delivered records are filtered against stored records by their record key:
  NOT EXISTS with a correlation on the key, key NOT IN (subquery), ANTI JOIN, LEFT JOIN ... IS
  NULL, or EXCEPT of rows that carry the key;
- `batch_dedup`: the rows of an `incoming` table are made unique on the record key (or on every
  column) before they flow into a persistent write: DISTINCT over columns that include the key,
  DISTINCT ON / GROUP BY (that only picks values: ANY_VALUE, FIRST, MAX, ARG_MAX, ...) /
  ROW_NUMBER() OVER (PARTITION BY ...) kept where it is 1, each on columns that include the key,
  or a set UNION / EXCEPT / INTERSECT of rows that carry it. A DISTINCT over entity keys alone is
  no guard, and neither is RANK (exact repeats tie);
- `upsert`: ON CONFLICT, INSERT OR REPLACE / OR IGNORE, MERGE, and DELETE of the rows that
  match the batch followed by an INSERT from the batch;
- `watermark_filter`: rows are compared (<, <=, >, >=) with the maximum of a column already
  stored, or with a value kept in a table named like a watermark;
- `select_star`: a `*` (or `t.*`, `COLUMNS(*)`) in the outer projection of what a persistent
  table or view is written or defined from; a star inside a subquery, CTE or temporary table
  whose columns are then named is not one, and `count(*)` never is;
- `full_recompute`: a table rebuilt whole from a persistent table: CREATE OR REPLACE TABLE/VIEW
  ... AS SELECT reading one, or DELETE without WHERE / TRUNCATE / DROP followed by a refill
  from one;
- `transaction`: the script opens its own transaction (BEGIN / START TRANSACTION), around all of
  its statements or some;
- `unparsed`: some statement could not be read by sqlglot; the other tags cover the rest.

"Read from the batch" means from schema `incoming`, or from a CTE, temporary table or view
derived from it, or a table emptied and refilled from it on every run; every other table is
persistent. Columns are followed by name through projections, aliases and casts.

Without a task (`spec=None`) the record keys and the sources' columns are unknown, and every
column of the batch is taken for a key: the record-key conditions then hold for any batch
column, so `SELECT DISTINCT account_id FROM incoming.postings` counts as a guard. Stored tags
are always computed with the task.

Statements are split by DuckDB's own parser (the runner's split), on one cached connection, each
then read by sqlglot in the DuckDB dialect.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import duckdb
import sqlglot
from sqlglot import exp

from arrivalbench.core.task import TaskSpec
from arrivalbench.sql.flow import NONE, PICKS, Columns, Flow, Origins, is_star, lower, strip
from arrivalbench.sql.syntax import Unparsable, parse

TAGS = ("anti_join", "batch_dedup", "full_recompute", "history_table", "select_star",
        "transaction", "unparsed", "upsert", "watermark_filter")

_COMPARE = (exp.GT, exp.GTE, exp.LT, exp.LTE)
_WATERMARK_NAME = re.compile(r"water|hwm|checkpoint|last_(?:load|seen|run|processed)|cursor|"
                             r"^wm$|^wm_|_wm$", re.IGNORECASE)
_BEGIN = re.compile(r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*(?:begin|start)\b",
                    re.IGNORECASE | re.DOTALL)


@dataclass
class _Reader(Flow):
    tags: set[str] = field(default_factory=set)
    temporary: set[str] = field(default_factory=set)  # temp tables and views
    cleared: set[str] = field(default_factory=set)  # emptied or dropped, not yet refilled
    replaced: set[str] = field(default_factory=set)  # rows matching the batch deleted
    primary_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)  # declared here

    # -- statements ----------------------------------------------------------------------------

    def read(self, statement: exp.Expr) -> None:
        self.ctes = {}
        added: set[str] = set()
        for cte in statement.find_all(exp.CTE):
            name = lower(cte.alias_or_name)
            self.ctes[name] = cte.this
            if name in self.batch | self.touched:
                continue
            self.mark(name, cte.this)
            added.add(name)
        try:
            self.statement(statement)
        finally:  # CTE names are in scope for this statement only
            self.batch -= added
            self.touched -= added
            self.guarded -= added
            for name in added:
                self.columns.pop(name, None)
            self.ctes = {}

    def statement(self, statement: exp.Expr) -> None:
        for select in statement.find_all(exp.Select):
            self.select(select)
        for comparison in statement.find_all(*_COMPARE):
            if self.is_watermark(comparison):
                self.tags.add("watermark_filter")
        for difference in statement.find_all(exp.Except):
            if self.rows_from_batch(difference.this) and \
                    self.reads_persistent(difference.expression) and \
                    self.covers(self.carried(difference.this)):
                self.tags.add("anti_join")
        if isinstance(statement, exp.Merge):
            self.merge(statement)
        elif isinstance(statement, exp.Insert):
            self.insert(statement)
        elif isinstance(statement, exp.Create):
            self.create(statement)
        elif isinstance(statement, exp.Delete):
            name = lower(statement.this.name)
            if not statement.args.get("where"):
                self.cleared.add(name)
            elif self.reads_batch(statement.args["where"]) or \
                    self.reads_batch(statement.args.get("using")):
                self.replaced.add(name)  # DELETE by the batch's keys, then INSERT: an upsert
        elif isinstance(statement, exp.TruncateTable):
            self.cleared.update(lower(t.name) for t in statement.expressions)
        elif isinstance(statement, exp.Drop):
            self.cleared.update(lower(t.name) for t in statement.args.get("tables") or []
                                if isinstance(t, exp.Table))
        elif isinstance(statement, exp.Transaction):
            self.tags.add("transaction")

    def select(self, select: exp.Select) -> None:
        """Anti-joins of delivered records against stored ones, on the record key."""
        if not self.selects_batch(select):
            return
        scope = self.scope(select)
        for join in select.args.get("joins") or []:
            stored = join.this
            if not isinstance(stored, exp.Table) or self.is_batch(stored):
                continue
            anti = lower(join.args.get("kind") or "") == "anti" or (
                lower(join.args.get("side") or "") == "left" and self.left_anti(select, join))
            if anti and self.covers(self.join_keys(join, scope)):
                self.tags.add("anti_join")
        where = select.args.get("where")
        for negation in where.find_all(exp.Not) if where is not None else []:
            if negation.parent_select is select and self.negates_stored(negation, scope):
                self.tags.add("anti_join")

    def join_keys(self, join: exp.Join, scope: Mapping[str, Columns]) -> Origins:
        """The batch columns a join condition matches stored rows on."""
        joined = lower(join.this.alias_or_name)
        outer = {name: columns for name, columns in scope.items() if name != joined}
        using = join.args.get("using") or []
        if using:
            return self.key_origins((exp.column(i.name) for i in using), outer)
        on = join.args.get("on")
        return self.equalities(on, outer, {joined}) if on is not None else NONE

    def equalities(self, condition: exp.Expr, outer: Mapping[str, Columns],
                   inner: set[str]) -> Origins:
        """Batch columns of `outer` that `condition` equates with a column of another
        relation."""
        found: set[str] = set()
        for test in condition.find_all(exp.EQ):
            left, right = strip(test.this), strip(test.expression)
            if not isinstance(left, exp.Column) or not isinstance(right, exp.Column):
                continue
            for side, other in ((left, right), (right, left)):
                if side.table and (lower(side.table) not in outer or
                                   lower(side.table) in inner):
                    continue  # not a column of the delivered rows
                if other.table and lower(other.table) not in inner:
                    continue  # not matched against the other relation
                found |= self.origins(side, outer)
        return frozenset(found)

    # -- the in-batch guard --------------------------------------------------------------------

    def is_guarded(self, source: object) -> bool:
        """The rows of `source` pass a guard against repeated batch records on their way (see
        the module docstring)."""
        selects = list(self.row_selects(source))
        for select in selects:
            if self.selects_batch(select) and self.dedups(select):
                return True
            if any(isinstance(t, exp.Table) and not t.db and lower(t.name) in self.guarded
                   and self.contributes(select, t) for t in self.direct_sources(select)):
                return True
        for operation in self.set_operations(source):
            if operation.args.get("distinct") and self.rows_from_batch(operation) and \
                    self.covers(self.carried(operation)):
                return True
        return self.first_of_row_number(selects)

    def set_operations(self, source: object) -> Iterator[exp.SetOperation]:
        if isinstance(source, exp.Subquery):
            yield from self.set_operations(source.this)
        elif isinstance(source, exp.SetOperation):
            yield source
        elif isinstance(source, exp.Select):
            for inner in self.direct_sources(source):
                name = lower(inner.name) if isinstance(inner, exp.Table) else ""
                if name in self.ctes:
                    yield from self.set_operations(self.ctes[name])
                elif not isinstance(inner, exp.Table):
                    yield from self.set_operations(inner)

    def dedups(self, select: exp.Select) -> bool:
        """DISTINCT, DISTINCT ON or a GROUP BY that only picks values, on the record key."""
        scope = self.scope(select)
        distinct = select.args.get("distinct")
        if distinct is not None:
            on = distinct.args.get("on")
            if on is not None:
                return self.unique_on_key(self.key_origins(on.expressions, scope),
                                          self.carried(select))
            return self.covers(self.carried(select))
        group = select.args.get("group")
        if group is None or not self.only_picks(select):
            return False
        if group.args.get("all"):
            keys = [p for p in select.expressions if not p.find(exp.AggFunc)]
        else:
            keys = [select.expressions[int(e.this) - 1]
                    if isinstance(e, exp.Literal) and not e.is_string
                    and 0 < int(e.this) <= len(select.expressions) else e
                    for e in group.expressions]
        return self.unique_on_key(self.key_origins(keys, scope), self.carried(select))

    def only_picks(self, select: exp.Select) -> bool:
        """No aggregate but ones that pick a value (window functions aside)."""
        for projection in select.expressions:
            for agg in projection.find_all(exp.AggFunc):
                if not isinstance(agg, PICKS) and not isinstance(agg.parent, exp.Window):
                    return False
        return True

    def first_of_row_number(self, selects: list[exp.Select]) -> bool:
        """A ROW_NUMBER over rows read from the batch, partitioned on the record key, kept only
        where it is 1: in a QUALIFY, or through its alias in an outer WHERE (a numbering alone
        is no guard, and RANK keeps every exact repeat)."""
        windows: list[exp.Window] = []
        aliases: set[str] = set()
        for select in selects:
            if not self.selects_batch(select):
                continue
            scope = self.scope(select)
            for window in select.find_all(exp.Window):
                if not isinstance(window.this, exp.RowNumber) or window.parent_select is not select:
                    continue
                partition = self.key_origins(window.args.get("partition_by") or [], scope)
                if not self.unique_on_key(partition, self.carried(select)):
                    continue
                windows.append(window)
                if isinstance(window.parent, exp.Alias):
                    aliases.add(lower(window.parent.alias))
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
                        (isinstance(ranked, exp.Column) and lower(ranked.name) in aliases):
                    return True
        return False

    # -- other idioms --------------------------------------------------------------------------

    def left_anti(self, select: exp.Select, join: exp.Join) -> bool:
        """LEFT JOIN persistent AS p ... WHERE p.col IS NULL."""
        names = {lower(join.this.alias_or_name), lower(join.this.name)}
        where = select.args.get("where")
        if where is None:
            return False
        for test in where.find_all(exp.Is):
            column = test.this
            if isinstance(test.expression, exp.Null) and isinstance(column, exp.Column) and \
                    lower(column.table) in names and not isinstance(test.parent, exp.Not):
                return True
        return False

    def negates_stored(self, node: exp.Not, scope: Mapping[str, Columns]) -> bool:
        """NOT EXISTS (... persistent ... correlated on the key) or key NOT IN (SELECT ...
        persistent ...)."""
        inner = node.this
        if isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Exists):
            query = inner.this
            if not self.reads_persistent(query) or not isinstance(query, exp.Select):
                return False
            where = query.args.get("where")
            own = {lower(s.alias_or_name) for s in self.direct_sources(query)}
            outer = {k: v for k, v in scope.items() if k not in own}
            return where is not None and self.covers(self.equalities(where, outer, own))
        query = inner.args.get("query") if isinstance(inner, exp.In) else None
        if query is None or not self.reads_persistent(query):
            return False
        left = inner.this
        keys = left.expressions if isinstance(left, exp.Tuple) else [left]
        return self.covers(self.key_origins(keys, scope))

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

    def star_flows(self, query: object) -> bool:
        """A star in the outer projection of `query` (through set operations, not into FROM)."""
        if isinstance(query, exp.Subquery):
            return self.star_flows(query.this)
        if isinstance(query, exp.SetOperation):
            return self.star_flows(query.this) or self.star_flows(query.expression)
        return isinstance(query, exp.Select) and any(is_star(p) for p in query.expressions)

    # -- writes --------------------------------------------------------------------------------

    def keyed_on_record(self, keys: Iterable[str], written: Columns) -> bool:
        """Target columns `keys` hold the record key of the batch rows written."""
        names = list(keys)
        return bool(names) and self.covers(o for k in names for o in written.get(k, NONE))

    def merge(self, merge: exp.Merge) -> None:
        self.tags.add("upsert")
        using = merge.args.get("using")
        if self.is_guarded(using):
            self.tags.add("batch_dedup")
        rows_from_batch = (isinstance(using, exp.Table) and self.is_batch(using)) or \
            self.rows_from_batch(using)
        whens = merge.args.get("whens")
        inserts = [w for w in (whens.expressions if whens else [])
                   if isinstance(w.args.get("then"), exp.Insert)]
        on = merge.args.get("on")
        if not (rows_from_batch and inserts and on is not None and isinstance(using, exp.Expr)):
            return
        alias = lower(using.alias_or_name)
        scope = {alias: self.relation_columns(using)}
        if self.covers(self.equalities(on, scope, {lower(merge.this.alias_or_name)})):
            self.tags.add("history_table")  # a table keyed by the record key gets the records

    def insert(self, insert: exp.Insert) -> None:
        target = insert.this.this if isinstance(insert.this, exp.Schema) else insert.this
        name = lower(target.name) if isinstance(target, exp.Table) else ""
        source = insert.expression
        written = self.outputs(source)
        if isinstance(insert.this, exp.Schema):  # INSERT INTO t (a, b): by position
            written = dict(zip((lower(c.name) for c in insert.this.expressions),
                               written.values(), strict=False))
        conflict = insert.args.get("conflict")
        alternative = lower(str(insert.args.get("alternative") or ""))
        if conflict is not None or alternative in ("replace", "ignore"):
            self.tags.add("upsert")
        if name in self.replaced and self.reads_batch(source):
            self.tags.add("upsert")
        updates = alternative == "replace" or (
            conflict is not None and "update" in lower(str(conflict.args.get("action") or "")))
        if updates:  # keyed on the record key, an upsert still keeps the records
            keys = [lower(strip(k).name) for k in conflict.args.get("conflict_keys") or []] \
                if conflict is not None else []
            updates = not self.keyed_on_record(keys or self.primary_keys.get(name, ()), written)
        staging = name in self.temporary or (name in self.cleared and
                                             not self.reads_persistent(source))
        if name and name not in self.temporary and self.star_flows(source):
            self.tags.add("select_star")
        if staging:  # a table that holds this batch's records again
            self.mark(name, source, written)
        elif name:
            if self.is_guarded(source):
                self.tags.add("batch_dedup")
            if not updates and self.rows_from_batch(source) and \
                    not self.aggregates(source) and \
                    self.covers(o for os in written.values() for o in os):
                self.tags.add("history_table")
        if name in self.cleared and self.reads_persistent(source):
            self.tags.add("full_recompute")
        self.cleared.discard(name)

    def mark(self, name: str, query: object, written: Columns | None = None) -> None:
        """Record what a temporary or staging relation holds."""
        if self.rows_from_batch(query):
            self.batch.add(name)
            self.columns[name] = self.outputs(query) if written is None else written
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
        kind = lower(str(create.args.get("kind") or ""))
        schema = create.this
        table = schema.this if isinstance(schema, exp.Schema) else schema
        if not isinstance(table, exp.Table):
            return
        name = lower(table.name)
        if isinstance(schema, exp.Schema):
            self.primary_keys[name] = self.declared_key(schema)
        properties = create.args.get("properties")
        temporary = properties is not None and any(
            isinstance(p, exp.TemporaryProperty) for p in properties.expressions)
        query = create.expression
        if kind == "view" or temporary:
            self.temporary.add(name)
            self.mark(name, query)
            if kind == "view" and not temporary:
                if self.star_flows(query):
                    self.tags.add("select_star")  # a persistent view is defined by the star
                if not self.reads_batch(query) and self.reads_persistent(query):
                    self.tags.add("full_recompute")  # the target as a view over what is stored
            return
        if kind != "table" or query is None:
            return
        for names in (self.batch, self.touched, self.guarded):
            names.discard(name)
        self.columns.pop(name, None)
        if self.is_guarded(query):
            self.tags.add("batch_dedup")
        if self.star_flows(query):
            self.tags.add("select_star")
        rebuilt = bool(create.args.get("replace")) or (name in self.cleared and
                                                        not create.args.get("exists"))
        receives = self.rows_from_batch(query) and not self.aggregates(query) and \
            not self.empty(query) and self.covers(self.carried(query))
        if rebuilt and self.reads_persistent(query):
            self.tags.add("full_recompute")
            if receives:
                self.tags.add("history_table")  # what was stored, with this batch's records
        elif rebuilt and self.reads_batch(query):
            self.mark(name, query)  # a staging table rebuilt from each batch
        elif create.args.get("exists") and receives:
            self.tags.add("history_table")  # the first run's records start the history
        self.cleared.discard(name)

    @staticmethod
    def empty(query: exp.Expr) -> bool:
        """LIMIT 0 or WHERE false: a query that only lends its columns."""
        limit = query.args.get("limit")
        if isinstance(limit, exp.Limit) and isinstance(limit.expression, exp.Literal):
            return str(limit.expression.this) == "0"
        where = query.args.get("where")
        return where is not None and isinstance(where.this, exp.Boolean) and \
            not where.this.this

    @staticmethod
    def declared_key(schema: exp.Schema) -> tuple[str, ...]:
        for item in schema.expressions:
            if isinstance(item, exp.PrimaryKey):
                return tuple(lower(e.name) for e in item.expressions)
            if isinstance(item, exp.ColumnDef) and any(
                    isinstance(c.args.get("kind"), exp.PrimaryKeyColumnConstraint)
                    for c in item.args.get("constraints") or []):
                return (lower(item.name),)
        return ()


# -- parsing ---------------------------------------------------------------------------------

def _statements(sql: str) -> list[tuple[str, bool]]:
    """(text, is a transaction statement) for each statement, split by DuckDB's parser; on a
    script DuckDB cannot parse, by semicolons."""
    try:
        parsed = parse(sql)
    except Unparsable:
        return [(part, False) for part in sql.split(";") if part.strip()]
    return [(s.query, s.type == duckdb.StatementType.TRANSACTION) for s in parsed]


@functools.lru_cache(maxsize=4096)
def _parse(text: str) -> exp.Expr | None:
    """One statement read by sqlglot, or None when it cannot be read. Callers copy nothing:
    the reader never changes a tree."""
    try:
        statement = sqlglot.parse_one(text, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return None
    return None if statement is None or isinstance(statement, exp.Command) else statement


def _keys(spec: TaskSpec | None) -> tuple[dict[str, tuple[tuple[str, ...], ...]] | None,
                                          dict[str, tuple[str, ...]]]:
    """The keys that identify a record of each source (the record key; for a change stream the
    entity key with the version as well) and each source's columns."""
    if spec is None:
        return None, {}
    columns = {lower(s.name): tuple(lower(c.name) for c in s.columns) for s in spec.sources}
    if spec.evolution is not None:  # the column a later batch carries is a column too
        source = lower(spec.evolution.source)
        columns[source] = (*columns.get(source, ()), lower(spec.evolution.column))
    keys: dict[str, tuple[tuple[str, ...], ...]] = {}
    for s in spec.sources:
        record = tuple(lower(k) for k in s.record_key)
        version = (*(lower(k) for k in s.entity_key), lower(s.version)) \
            if s.is_change_stream and s.version is not None else None
        keys[lower(s.name)] = (record,) if version is None else (record, version)
    return keys, columns


def signature(sql: str, spec: TaskSpec | None = None) -> list[str]:
    """The sorted idiom tags of a DuckDB script, judged against the task `spec` (see the
    module docstring; without it, record keys are judged loosely)."""
    record_keys, columns = _keys(spec)
    reader = _Reader(record_keys, columns)
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # sqlglot warns when it falls back to a Command
    try:
        for text, is_transaction in _statements(sql):
            if is_transaction:
                if _BEGIN.match(text):
                    reader.tags.add("transaction")
                continue
            statement = _parse(text)
            if statement is None:
                reader.tags.add("unparsed")
                continue
            reader.read(statement)  # a crash here is a bug of the reader, not `unparsed`
    finally:
        logger.setLevel(level)
    return sorted(reader.tags)
