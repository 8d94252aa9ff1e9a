"""A model's full refresh as one query over its sources.

dbt compiles each model of `+model` under `--full-refresh` to a SELECT that reads its parents
and its sources as fully qualified relations of the replay database. Put together as common
table expressions, with each source read by its bare name, they are one query a task's
reference can be: it runs over any prefix of the data, which the every-batch check and
`explain` need. sqlglot rewrites the relation names (never the text); the caller checks the
query once against dbt's own full refresh and keeps dbt's rows where they differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

Relation = tuple[str, str]  # schema, identifier


@dataclass(frozen=True)
class Compiled:
    """One model as dbt compiled it for a full refresh."""

    relation: Relation
    code: str


class NotInlined(Exception):
    """Why the models do not make one query (the caller keeps dbt's rows instead)."""


def _cte(relation: Relation) -> str:
    return f"dbt__{relation[0]}__{relation[1]}"


def inlined(models: Sequence[Compiled], output: Relation, sources: Mapping[str, Relation],
            database: str) -> str:
    """One SELECT returning what `output` holds after a full refresh of `models`, reading each
    source by its name in `sources` (source -> relation). Raises NotInlined when a model reads
    a relation that is neither a source nor one of `models`, or does not parse."""
    by_relation = {m.relation: m for m in models}
    if output not in by_relation:
        raise NotInlined(f"dbt compiled no SQL for {'.'.join(output)}")
    source_of = {relation: name for name, relation in sources.items()}
    trees: dict[Relation, exp.Query] = {}
    needs: dict[Relation, set[Relation]] = {}
    for model in models:
        try:
            tree = sqlglot.parse_one(model.code, read="duckdb")
        except sqlglot.errors.SqlglotError as exc:
            raise NotInlined(f"sqlglot cannot parse {'.'.join(model.relation)}: "
                             f"{str(exc).splitlines()[0]}") from None
        if not isinstance(tree, exp.Query):
            raise NotInlined(f"{'.'.join(model.relation)} is not a SELECT")
        needs[model.relation] = set()
        for table in list(tree.find_all(exp.Table)):
            if table.catalog != database:
                continue  # a common table expression of the model's own
            read = (table.db, table.name)
            if read in source_of:
                name = source_of[read]
            elif read in by_relation:
                needs[model.relation].add(read)
                name = _cte(read)
            else:
                raise NotInlined(f"{'.'.join(model.relation)} reads {'.'.join(read)}, neither "
                                 "a source nor a model it depends on")
            alias = table.alias or table.name
            table.replace(exp.Table(this=exp.to_identifier(name),
                                    alias=exp.TableAlias(this=exp.to_identifier(alias))))
        trees[model.relation] = tree
    ordered: list[Relation] = []
    while len(ordered) < len(trees):  # parents first: a common table expression reads back
        ready = [r for r in trees if r not in ordered and needs[r] <= set(ordered)]
        if not ready:
            raise NotInlined("the models read each other in a cycle")
        ordered.extend(sorted(ready))
    query: exp.Query = exp.select("*").from_(_cte(output))
    for relation in ordered:
        query = query.with_(_cte(relation), as_=trees[relation])
    return query.sql(dialect="duckdb", pretty=True)
