"""Estimated cost of CRD rules: sizes from the schema, cardinality, and the API server's limits on CRD create.

The estimator itself is `kcel.cost`; this module gives it what a CRD knows (k8s.io/apiextensions-apiserver
pkg/apiserver/schema/cel/compilation.go `sizeEstimator`, `maxCardinality`) and applies the limits of
pkg/apis/apiextensions/validation (`StaticEstimatedCostLimit`, `StaticEstimatedCRDCostLimit`,
`getExpressionCost`, `getCostErrorMessage`, `TotalCost`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kcel.checker.types import CelType
from kcel.cost import Path
from kcel.k8s import field as fe
from kcel.k8s.schemas.decltypes import MAX_REQUEST_SIZE_BYTES, DeclType
from kcel.k8s.schemas.schema import Schema
from kcel.libs import UINT64_MAX, SizeEstimate

STATIC_ESTIMATED_COST_LIMIT = 10_000_000  # one rule (times its cardinality) or one messageExpression
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000  # all of them in one schema
_REMEMBERED_SHARE = STATIC_ESTIMATED_CRD_COST_LIMIT // 100  # smaller contributions are not named in errors
_ADVICE = "try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared"  # noqa: E501


@dataclass(frozen=True)
class SchemaSizes:
    """Upstream `sizeEstimator`: the size bound of the value at a field path, from the rule's type.

    The path's first element is the variable (`self`, `oldSelf`, both of the rule's type); then field names,
    `@items`/`@values` (elements) and `@keys`. The answer is `0..MaxElements` of the type reached.
    """

    root: DeclType

    def estimate_size(self, path: Path, type: CelType) -> SizeEstimate | None:
        node = self.node_at(path[1:]) if path else None
        return SizeEstimate(0, node.max_elements) if node is not None else None

    def node_at(self, steps: Path) -> DeclType | None:
        """The type reached from the root by field names, `@items`/`@values` and `@keys`."""
        node: DeclType | None = self.root
        for step in steps:
            node = _step(node, step) if node is not None else None
        return node


_MAP_KEY = DeclType("string", None, 0)  # upstream's shared StringType: no size bound recorded (0)


def _step(node: DeclType, step: str) -> DeclType | None:
    if step in ("@items", "@values"):
        return node.elem
    if step == "@keys":
        return _MAP_KEY if node.kind == "map" else None
    found = node.fields.get(step)
    return found.type if found is not None else None


def max_cardinality(min_size: int) -> int:
    """How many values of at least `min_size` serialized bytes fit in one request (a comma apart)."""
    return MAX_REQUEST_SIZE_BYTES // (min_size + 1)


def max_elements(schema: Schema) -> int | None:
    """Upstream `extractMaxElements`: how many children a node has at most, None when unbounded."""
    if schema.type == "object":
        if schema.additional_properties is not None:
            return max(schema.max_properties, 0) if schema.max_properties is not None else None
        return 1
    if schema.type == "array":
        return max(schema.max_items, 0) if schema.max_items is not None else None
    return 1


def child_cardinality(cardinality: int | None, bound: int | None) -> int | None:
    """How often a rule can run below a list or map of at most `bound` elements (saturating; None: unbounded)."""
    if cardinality is None or bound is None:
        return None
    return min(cardinality * bound, UINT64_MAX)


def times_cardinality(cost: int, cardinality: int) -> int:
    """Upstream `multiplyWithOverflowGuard`: saturating, and a free rule stays free."""
    return 0 if cost == 0 else min(cost * cardinality, UINT64_MAX)


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """`<name> exceeds budget by factor of <F>`, with F worded as upstream's getCostErrorMessage does."""
    factor = cost / limit
    if factor > 100.0:
        worded = "more than 100x"
    elif factor < 1.5:
        worded = f"{factor:f}x"  # never "1.0x"
    else:
        worded = f"{factor:.1f}x"
    return f"{name} exceeds budget by factor of {worded} ({_ADVICE})"


@dataclass(frozen=True)
class Multiplier:
    """A list or map above a rule: it may hold up to `maxItems`/`maxProperties` copies of the rule's node."""

    location: str  # where its data is, `spec.containers`
    schema: Schema

    @property
    def bound(self) -> int | None:
        return max_elements(self.schema)


@dataclass
class TotalCost:
    """The estimated costs of one schema's expressions, added up; the four largest are kept for the errors."""

    total: int = 0
    most_expensive: list[tuple[fe.Path, int]] = field(default_factory=list)

    def observe(self, path: fe.Path, cost: int) -> None:
        self.total = min(self.total + cost, UINT64_MAX)
        if cost < _REMEMBERED_SHARE:
            return
        self.most_expensive.append((path, cost))
        self.most_expensive.sort(key=lambda entry: -entry[1])
        del self.most_expensive[4:]

    def errors(self, schema_path: fe.Path) -> list[fe.FieldError]:
        """The errors when the total is over the per-CRD limit (none otherwise)."""
        if self.total <= STATIC_ESTIMATED_CRD_COST_LIMIT:
            return []
        contributed = "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
        errors = [fe.forbidden(path, contributed) for path, _ in self.most_expensive]
        name = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        message = cost_error_message(name, self.total, STATIC_ESTIMATED_CRD_COST_LIMIT)
        return [*errors, fe.forbidden(schema_path, message)]
