"""Why a CRD rule is expensive: the schema bounds behind its estimated cost, and the bounds that would fix it.

The API server only says "estimated rule cost exceeds budget". Here the estimator is run again with the
sizes it used recorded: every string, list and map the rule reads, and every list and map above the rule
(each multiplies how often the rule runs). For each of those bounds, the largest `maxLength`, `maxItems`
or `maxProperties` that brings the rule under the limit is found by re-estimating, not guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kcel.checker.types import CelType
from kcel.cost import Path
from kcel.env import Env
from kcel.k8s.rules.cost import (
    STATIC_ESTIMATED_COST_LIMIT,
    SchemaSizes,
    times_cardinality,
)
from kcel.k8s.rules.validation import ExpressionCost
from kcel.k8s.schemas.decltypes import DeclType
from kcel.libs import UINT64_MAX, SizeEstimate

_KEYWORDS = {"list": "maxItems", "map": "maxProperties"}
_FIXED_FORMATS = ("duration", "date", "date-time")  # their size does not depend on maxLength
_NO_LIMIT = 2**40  # a bound this large changes nothing: the request size limit comes first


@dataclass(frozen=True)
class Bound:
    """A schema node whose size bound drives an expression's cost."""

    location: str  # where the data is: `spec.containers[*].image`
    keyword: str  # maxLength, maxItems or maxProperties
    declared: int | None  # the value the schema sets; None when the request size limit bounds it
    assumed: int  # the bound the estimate used (characters, items or properties)
    multiplier: bool  # a list or map above the rule (it multiplies how often the rule runs)
    suggestion: int | None  # the largest value that alone brings the expression under the limit; None if none

    def describe(self, over: bool) -> str:
        """One line for the CRD author; `over`: the expression is over its limit now."""
        unit = {"maxLength": "characters", "maxItems": "items", "maxProperties": "properties"}[self.keyword]
        if self.declared is None:
            state = f"no {self.keyword}: up to {self.assumed:,} {unit} fit in a request"
        else:
            state = f"{self.keyword}: {self.declared:,}"
        role = "runs the rule once per element" if self.multiplier else "is read by the expression"
        if self.suggestion is None:
            advice = f"no {self.keyword} alone brings it under the limit"
        elif self.suggestion >= _NO_LIMIT:
            advice = "any value keeps it under the limit"
        elif over:
            advice = f"{self.keyword}: {self.suggestion:,} or less brings it under the limit"
        else:
            advice = f"it stays under the limit up to {self.keyword}: {self.suggestion:,}"
        return f"{self.location} ({state}) {role}; {advice}"


@dataclass(frozen=True)
class Explanation:
    """What `explain` finds: the expression's cost, the bounds behind it and the limit; `lines` words it."""

    cost: ExpressionCost
    bounds: tuple[Bound, ...]
    together: int | None  # one value for every bound, when no single one suffices; None if even 1 does not
    limit: int

    def lines(self) -> list[str]:
        over = self.cost.cost > self.limit
        lines = [bound.describe(over) for bound in self.bounds]
        if self.bounds and all(b.suggestion is None for b in self.bounds):
            if self.together is not None and len(self.bounds) > 1:
                lines.append(f"setting all of them to {self.together:,} or less brings it under the limit")
            else:
                lines.append("no bound on the schema brings it under the limit: simplify the expression")
        if not self.bounds:
            lines.append("its cost does not depend on the schema's bounds: simplify the expression")
        return lines


def explain(cost: ExpressionCost, limit: int = STATIC_ESTIMATED_COST_LIMIT) -> Explanation:
    """The bounds behind an expression's estimated cost, each with the value that would bring it within `limit`."""
    model = _CostModel(cost)
    sized = [_sized_bound(cost, path, node) for path, node in model.read_paths().items()]
    candidates = [c for c in sized if c is not None]
    if not cost.message:
        candidates += [_multiplier_bound(cost, i) for i in range(len(cost.multipliers))]
    bounds = tuple(
        Bound(c.location, c.keyword, c.declared, c.assumed, c.multiplier, model.largest({c.key: c.scale}, c, limit))
        for c in candidates
    )
    together = None
    if bounds and all(b.suggestion is None for b in bounds):
        together = model.largest({c.key: c.scale for c in candidates}, max(candidates, key=lambda c: c.assumed), limit)
    return Explanation(cost, bounds, together, limit)


def bound_fix(cost: ExpressionCost, limit: int = STATIC_ESTIMATED_COST_LIMIT) -> str | None:
    """The one schema bound that brings an expression under the limit, said for its author
    (`spec.items (no maxItems: ...) runs the rule once per element; maxItems: 10 or less brings it under the limit`);
    None when no single bound does."""
    fixes = [b for b in explain(cost, limit).bounds if b.suggestion is not None and b.suggestion < _NO_LIMIT]
    return fixes[0].describe(over=True) if fixes else None


@dataclass(frozen=True)
class _Candidate:
    """A bound before its suggestion is found: how its size enters the cost model, and what Bound reports."""

    key: tuple[str, ...]  # the size path below `self` (sizes), or ("#", i) for the i-th multiplier
    scale: int  # size units per unit of the keyword (4 bytes per character for strings)
    location: str
    keyword: str
    declared: int | None
    assumed: int
    multiplier: bool = False


def _sized_bound(cost: ExpressionCost, path: Path, node: DeclType) -> _Candidate | None:
    schema = node.schema
    if schema is None or node.max_elements == 0:
        return None
    location = cost.location + "".join("[*]" if step in ("@items", "@values") else f".{step}" for step in path)
    if node.kind in _KEYWORDS:
        declared = schema.max_items if node.kind == "list" else schema.max_properties
        return _Candidate(path, 1, location, _KEYWORDS[node.kind], declared, node.max_elements)
    if node.kind not in ("string", "bytes", "dyn") or schema.format in _FIXED_FORMATS:
        return None
    if schema.max_length is None and schema.enum:
        return None  # bounded by its longest value already
    scale = 1 if node.kind == "bytes" else 4  # maxLength counts characters; sizes count bytes (4 per character)
    return _Candidate(path, scale, location, "maxLength", schema.max_length, node.max_elements // scale)


def _multiplier_bound(cost: ExpressionCost, index: int) -> _Candidate:
    multiplier = cost.multipliers[index]
    keyword = "maxItems" if multiplier.schema.type == "array" else "maxProperties"
    declared = multiplier.bound
    assumed = declared if declared is not None else cost.compiled.max_cardinality
    return _Candidate(("#", str(index)), 1, multiplier.location, keyword, declared, assumed, multiplier=True)


class _CostModel:
    """Re-estimates one expression with some bounds changed."""

    def __init__(self, cost: ExpressionCost) -> None:
        self.cost = cost
        compiled = cost.compiled
        program = compiled.message_program if cost.message else compiled.program
        assert program is not None and compiled.self_type is not None
        self.program, self.root = program, compiled.self_type
        env = program.declarations
        assert isinstance(env, Env)
        self.env = env

    def read_paths(self) -> dict[Path, DeclType]:
        """The schema nodes the estimate asked the size of (below `self`/`oldSelf`), by path."""
        recorder = _RecordingSizes(self.root, {})
        self.env.estimate_cost(self.program, recorder)
        return recorder.read

    def total(self, overrides: Mapping[tuple[str, ...], int]) -> int:
        sizes = _RecordingSizes(self.root, {k: v for k, v in overrides.items() if k[:1] != ("#",)})
        estimate = self.env.estimate_cost(self.program, sizes).max
        if self.cost.message:
            return estimate
        cardinality = 1
        for i, multiplier in enumerate(self.cost.multipliers):
            bound = overrides.get(("#", str(i)), multiplier.bound)
            if bound is None:
                return times_cardinality(estimate, self.cost.compiled.max_cardinality)
            cardinality = min(cardinality * bound, UINT64_MAX)
        return times_cardinality(estimate, cardinality)

    def largest(self, scales: Mapping[tuple[str, ...], int], candidate: _Candidate, limit: int) -> int | None:
        """The largest value (1 to what the estimate assumed) for the given bounds that stays within `limit`."""

        def fits(value: int) -> bool:
            return self.total({key: value * scale for key, scale in scales.items()}) <= limit

        low = 1
        if not fits(low):
            return None  # 0 would do, but a list that must be empty or a string that must be blank is no advice
        high = max(candidate.declared or candidate.assumed, 1)
        while fits(high):  # within the limit already: how far could the bound go?
            if high >= _NO_LIMIT:
                return _NO_LIMIT
            low, high = high, high * 2
        while high - low > 1:  # fits(low) and not fits(high)
            middle = (low + high) // 2
            low, high = (middle, high) if fits(middle) else (low, middle)
        return low


class _RecordingSizes(SchemaSizes):
    """Schema sizes that remember which nodes were asked about, and answer some with other bounds."""

    def __init__(self, root: DeclType, overrides: Mapping[tuple[str, ...], int]) -> None:
        super().__init__(root)
        object.__setattr__(self, "overrides", overrides)
        object.__setattr__(self, "read", {})

    overrides: Mapping[tuple[str, ...], int]
    read: dict[Path, DeclType]

    def estimate_size(self, path: Path, type: CelType) -> SizeEstimate | None:
        found = super().estimate_size(path, type)
        if found is None:
            return None
        key = tuple(path[1:])
        node = self.node_at(key)
        if node is not None:
            self.read.setdefault(key, node)
        return SizeEstimate(0, self.overrides[key]) if key in self.overrides else found
