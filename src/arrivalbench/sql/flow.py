"""How rows and columns flow through a DuckDB script read by sqlglot: which relations hold the
batch's rows, and which batch columns ("source.column") each output column carries, followed by
name through projections, stars, aliases, casts, subqueries, CTEs and temporary relations.
The idiom signatures (`arrivalbench.sql.idioms`) judge writes on it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from sqlglot import exp

PICKS = (exp.AnyValue, exp.First, exp.Last, exp.Max, exp.Min, exp.ArgMax, exp.ArgMin)

# The batch columns an output column carries, as "source.column"; "source.*" stands for a
# column of a source whose columns are not known.
Origins = frozenset[str]
Columns = dict[str, Origins]
NONE: Origins = frozenset()


def lower(name: str) -> str:
    return name.lower()


def strip(node: exp.Expr) -> exp.Expr:
    """The column under aliases, casts and parentheses (a computed value carries nothing)."""
    while isinstance(node, exp.Alias | exp.Cast | exp.Paren | exp.Ordered):
        node = node.this
    return node


def is_star(projection: exp.Expr) -> bool:
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column | exp.Columns) and isinstance(projection.this, exp.Star))


def _star_except(star: exp.Expr) -> set[str]:
    node = star.this if isinstance(star, exp.Column) else star
    excluded = node.args.get("except_") or node.args.get("except") or [] \
        if isinstance(node, exp.Star) else []
    return {lower(e.name) for e in excluded}


@dataclass
class Flow:
    """What the statements read so far say about relations, and the task's keys."""

    record_keys: Mapping[str, tuple[tuple[str, ...], ...]] | None  # the keys of a record,
    # by source (None: no task, judged loosely)
    source_columns: Mapping[str, tuple[str, ...]]
    batch: set[str] = field(default_factory=set)  # temp tables, views, CTEs whose rows are batch
    touched: set[str] = field(default_factory=set)  # ... whose definition reads the batch at all
    guarded: set[str] = field(default_factory=set)  # batch relations already deduplicated
    columns: dict[str, Columns] = field(default_factory=dict)  # of batch relations
    ctes: dict[str, exp.Expr] = field(default_factory=dict)  # of the statement being read

    # -- the task's keys -----------------------------------------------------------------------

    def covers(self, origins: Iterable[str]) -> bool:
        """`origins` include the whole record key of some source (any batch column without a
        task, or for a source the task does not declare)."""
        found = set(origins)
        for source in {o.split(".", 1)[0] for o in found}:
            keys = None if self.record_keys is None else self.record_keys.get(source)
            if keys is None or f"{source}.*" in found or \
                    any(all(f"{source}.{k}" in found for k in key) for key in keys):
                return True
        return False

    def unique_on_key(self, key: Iterable[str], carried: Iterable[str]) -> bool:
        """Rows kept one per `key` are unique on the record key: `key` includes it (a record
        delivered twice repeats itself exactly), or is part of it while the rows carry all of it
        (one version per entity is one per (entity, version) as well)."""
        chosen, kept = set(key), set(carried)
        if self.covers(chosen):
            return True
        if not chosen or self.record_keys is None:
            return False
        for source in {o.split(".", 1)[0] for o in chosen}:
            own = {o for o in chosen if o.startswith(f"{source}.")}
            for record_key in self.record_keys.get(source, ()):
                names = {f"{source}.{k}" for k in record_key}
                if own <= names and names <= kept:
                    return True
        return False

    def incoming_columns(self, table: exp.Table) -> Columns:
        source = lower(table.name)
        names = self.source_columns.get(source)
        if names is None:
            return {"*": frozenset({f"{source}.*"})}
        return {n: frozenset({f"{source}.{n}"}) for n in names}

    # -- relations -----------------------------------------------------------------------------

    def is_batch(self, table: exp.Table) -> bool:
        return lower(table.db) == "incoming" or (not table.db and
                                                  lower(table.name) in self.batch)

    def tables(self, node: object) -> Iterator[exp.Table]:
        if isinstance(node, exp.Expr):
            yield from (t for t in node.find_all(exp.Table) if t.name)

    def reads_batch(self, node: object) -> bool:
        """Anything in `node` reads the batch, if only in a filter."""
        return any(self.is_batch(t) or (not t.db and lower(t.name) in self.touched)
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
        names = {lower(source.alias_or_name)}
        if isinstance(source, exp.Table):
            names.add(lower(source.name))
        for projection in select.expressions:
            if isinstance(projection, exp.Star):
                return True
            for column in projection.find_all(exp.Column):
                if not column.table or lower(column.table) in names:
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
                name = lower(inner.name) if isinstance(inner, exp.Table) and not inner.db \
                    else ""
                if name in self.ctes and name not in seen:
                    yield from self.row_selects(self.ctes[name], seen | {name})
                elif not isinstance(inner, exp.Table):
                    yield from self.row_selects(inner, seen)

    # -- columns -------------------------------------------------------------------------------

    def relation_columns(self, source: exp.Expr) -> Columns:
        """The batch columns each column of a FROM or JOIN source carries."""
        if isinstance(source, exp.Table):
            if lower(source.db) == "incoming":
                return self.incoming_columns(source)
            if not source.db:
                return self.columns.get(lower(source.name), {})
            return {}
        return self.outputs(source)

    def scope(self, select: exp.Select) -> dict[str, Columns]:
        """The select's sources by the name its columns use for them."""
        found: dict[str, Columns] = {}
        for source in self.direct_sources(select):
            found[lower(source.alias_or_name)] = self.relation_columns(source)
        return found

    def origins(self, node: exp.Expr, scope: Mapping[str, Columns]) -> Origins:
        """The batch columns `node` carries when it is a column (under aliases and casts)."""
        node = strip(node)
        if isinstance(node, PICKS):  # a picked value is one of the column's own
            node = strip(node.this)
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return NONE
        name = lower(node.name)
        relations = [scope.get(lower(node.table), {})] if node.table else list(scope.values())
        found: set[str] = set()
        for relation in relations:
            found |= relation.get(name) or relation.get("*") or NONE
        return frozenset(found)

    def outputs(self, query: object) -> Columns:
        """The batch columns each output column of `query` carries, in output order."""
        if isinstance(query, exp.Subquery):
            return self.outputs(query.this)
        if isinstance(query, exp.SetOperation):
            left, right = self.outputs(query.this), list(self.outputs(query.expression).values())
            return {name: origins | (right[i] if i < len(right) else NONE)
                    for i, (name, origins) in enumerate(left.items())}
        if not isinstance(query, exp.Select):
            return {}
        scope = self.scope(query)
        out: Columns = {}
        for projection in query.expressions:
            if is_star(projection):
                qualifier = projection.table if isinstance(projection, exp.Column) else ""
                relations = [scope.get(lower(qualifier), {})] if qualifier \
                    else list(scope.values())
                excluded = _star_except(projection)
                for relation in relations:
                    out.update({n: o for n, o in relation.items() if n not in excluded})
            else:
                out[lower(projection.alias_or_name)] = self.origins(projection, scope)
        return out

    def key_origins(self, expressions: Iterable[exp.Expr], scope: Mapping[str, Columns]
                    ) -> Origins:
        return frozenset(o for e in expressions for c in
                         ([e] if isinstance(e, exp.Column) else e.find_all(exp.Column))
                         for o in self.origins(c, scope))

    def carried(self, query: object) -> Origins:
        return frozenset(o for os in self.outputs(query).values() for o in os)
