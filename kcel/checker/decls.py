"""What a function library declares: overloads (signature, implementation, runtime and estimated cost) and
the cost arithmetic their estimates use (cel-go's `common/decls` and `checker/cost.go`).

These are the rows of every library table in `kcel.libs`. They sit below the checker, the planner and
the estimator, which all read the tables, so no stage has to import the libraries to know their shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from kcel.checker.types import DYN, CelType
from kcel.errors import Issue
from kcel.parser.ast import Expr
from kcel.parser.macros import Macro
from kcel.values import NONE, Optional

RuntimeCost = Callable[[Sequence[Any], Any], int]
"""Runtime cost of one call: (argument values, receiver first; result) -> cost in cel-go units."""


UINT64_MAX = 2**64 - 1


def _add(x: int, y: int) -> int:
    return min(x + y, UINT64_MAX)


def _mul(x: int, y: int) -> int:
    return min(x * y, UINT64_MAX)


def cost_factor(size: float, factor: float) -> int:
    """cel-go's multiplyByCostFactor: ceil(size * factor) in float64, saturating at 2^64-1."""
    cost = math.ceil(float(size) * factor)
    return UINT64_MAX if cost >= 2**64 else cost


_B = TypeVar("_B", bound="_Bounds")


class _Bounds:
    """Saturating uint64 arithmetic on (min, max) pairs, as cel-go's SizeEstimate and CostEstimate do it."""

    __slots__ = ()
    min: int
    max: int

    if TYPE_CHECKING:

        def __init__(self, min: int, max: int) -> None: ...

    def add(self: _B, other: _Bounds) -> _B:
        return type(self)(_add(self.min, other.min), _add(self.max, other.max))

    def multiply(self: _B, other: _Bounds) -> _B:
        return type(self)(_mul(self.min, other.min), _mul(self.max, other.max))

    def union(self: _B, other: _Bounds) -> _B:
        return type(self)(min(self.min, other.min), max(self.max, other.max))

    def times(self, factor: float) -> CostEstimate:
        """Each bound times a cost factor, rounded up (MultiplyByCostFactor)."""
        return CostEstimate(cost_factor(self.min, factor), cost_factor(self.max, factor))


@dataclass(frozen=True, slots=True)
class SizeEstimate(_Bounds):
    """The smallest and largest size (code points, bytes, elements, entries) a value may have."""

    min: int
    max: int

    def cost(self, per_element: CostEstimate) -> CostEstimate:
        """Each bound times a per-element cost (MultiplyByCost)."""
        return CostEstimate(_mul(self.min, per_element.min), _mul(self.max, per_element.max))


@dataclass(frozen=True, slots=True)
class CostEstimate(_Bounds):
    """The least and most an expression or call may cost, in cel-go's units."""

    min: int
    max: int


UNKNOWN_SIZE = SizeEstimate(0, UINT64_MAX)
FREE = CostEstimate(0, 0)
UNIT = CostEstimate(1, 1)
NOT_LITERAL: Any = object()


@dataclass(frozen=True, slots=True)
class CallEstimate:
    """What an overload's estimate returns (cel-go `CallEstimate`): its own cost, without the arguments'
    costs, and the size of its result when it is a string, bytes, list or map whose size it can bound."""

    cost: CostEstimate
    result_size: SizeEstimate | None = None


class CallSite(Protocol):
    """What an overload's estimate may ask about one call: its arguments, receiver first."""

    def __len__(self) -> int: ...

    def size(self, i: int) -> SizeEstimate:
        """The argument's size from the expression or the schema; unknown (0 to 2^64-1) otherwise."""

    def computed_size(self, i: int) -> SizeEstimate | None:
        """The size known from the expression itself (cel-go `ComputedSize`), if any."""

    def literal(self, i: int) -> Any:
        """The argument's value when it is a literal, else `NOT_LITERAL`."""

    def type(self, i: int) -> CelType:
        """The argument's checked type."""

    def element_size(self, i: int) -> SizeEstimate:
        """The size of an element of a list argument, from the schema (`<path>.@items`); unknown otherwise."""


def int_literal(value: Any, default: int) -> int:
    """cel-go's nodeAsUintValue: an int literal's value (a negative one counts as 0), else `default`."""
    if type(value) is not int:
        return default
    return max(value, 0)


Estimate = Callable[[CallSite], "CallEstimate | None"]
"""Static cost of one call (cel-go's overload estimators and Kubernetes' `EstimateCallCost`); None
falls back to cel-go's default of 1."""


@dataclass(frozen=True, slots=True)
class SizedCall:
    """A call site that knows only its arguments' sizes (and optionally types): for tests and tables."""

    sizes: Sequence[SizeEstimate]
    types: Sequence[CelType] = ()
    elements: Sequence[SizeEstimate] = ()  # element sizes of list arguments, where known

    def __len__(self) -> int:
        return len(self.sizes)

    def size(self, i: int) -> SizeEstimate:
        return self.sizes[i]

    def computed_size(self, i: int) -> SizeEstimate | None:
        return self.sizes[i]

    def literal(self, i: int) -> Any:
        return NOT_LITERAL

    def type(self, i: int) -> CelType:
        return self.types[i] if self.types else DYN

    def element_size(self, i: int) -> SizeEstimate:
        return self.elements[i] if i < len(self.elements) else UNKNOWN_SIZE


@dataclass(frozen=True, slots=True)
class Overload:
    """One overload of a CEL function.

    `args` include the receiver first when `member` is true. `impl` takes the argument values
    (receiver first) and returns the result or raises `kcel.errors.EvalError`. `cost` is the
    runtime cost; None means cel-go's default of 1.
    """

    id: str
    function: str
    args: tuple[CelType, ...]
    result: CelType
    impl: Callable[..., Any]
    member: bool = False
    cost: RuntimeCost | None = None
    doc: str = ""
    estimate: Estimate | None = None
    constant_check: ConstantCheck | None = None
    generic: bool = field(init=False, repr=False, compare=False)
    """Whether the signature has type parameters (the checker binds them on a copy of its substitution)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "generic", any(map(has_params, (*self.args, self.result))))


def has_params(t: CelType) -> bool:
    """Whether a type has type parameters anywhere in it."""
    return t.kind == "param" or any(map(has_params, t.params))


@dataclass(frozen=True, slots=True)
class ConstantCheck:
    """A check the planner runs on a literal argument (cel-go's regex precompilation).

    When argument `position` (the receiver is 0) is a literal, `check(value)` runs once at plan
    time; an exception fails the program ("program instantiation failed"), before any evaluation.
    """

    position: int
    check: Callable[[Any], Any]


@dataclass(frozen=True)
class FieldAccess:
    """How generated code reads one field of a declared object type: the value, presence, and as an optional."""

    read: Callable[[Any], Any]
    test: Callable[[Any], bool]
    read_optional: Callable[[Any], Any]
    key: str | None = None
    plain: type | None = None
    """The data key, and the class whose values under it are the field's CEL values as they are: generated code
    reads such a value of a dict inline and calls `read` only for anything else (absent, null, another type)."""
    attribute: str | None = None
    owner: type | None = None
    """The attribute whose value is the field's CEL value on an instance of exactly `owner` (a protobuf message
    class): generated code reads it inline and calls `read` for anything else."""

    @classmethod
    def of(cls, read: Callable[[Any], Any], test: Callable[[Any], bool]) -> FieldAccess:
        """`read_optional` from `read` and `test`: `x.?f` (and `opt.f` on an optional) is the field if present."""

        def read_optional(obj: Any) -> Optional:
            if type(obj) is Optional:
                if not obj.has_value():
                    return obj
                obj = obj.value
            return Optional(read(obj)) if test(obj) else NONE

        return cls(read, test, read_optional)


class StructType(Protocol):
    """A message type a library declares by name (`JSONPatch`, `Object.spec`): the checker asks it for field
    types, the planner for how to build a value from a literal's fields (`JSONPatch{op: "add", ...}`)."""

    @property
    def cel(self) -> CelType: ...
    def field_type(self, name: str, keywords: bool = False) -> CelType | None: ...
    def field_access(self, name: str, keywords: bool = False) -> FieldAccess | None: ...
    def construct(self, fields: dict[str, Any]) -> Any: ...

    @property
    def equals(self) -> Callable[[Any, Any], bool]: ...


StructResolver = Callable[[str], StructType | None]
"""A library's message types by qualified name (cel-go's type provider `FindStructType`)."""


ASTValidator = Callable[[Expr, Mapping[int, CelType], Mapping[int, tuple[str, ...]]], list[Issue]]
"""A check a library adds after type-checking (cel-go `cel.ASTValidators`): given the expression, the checked
type of every node and the overloads each call may use, the issues that make it a compile error."""


@dataclass(frozen=True, slots=True)
class Library:
    """A library's declarations: its function overloads, macros, constants, types and AST validators."""

    name: str
    overloads: tuple[Overload, ...] = ()
    macros: tuple[Macro, ...] = ()
    constants: dict[str, Any] = field(default_factory=dict)
    types: tuple[CelType, ...] = ()
    """Opaque types the library declares; their names become type identifiers (`net.IP`)."""
    validators: tuple[ASTValidator, ...] = ()
    mixed_literal_functions: tuple[str, ...] = ()
    """Functions whose list and map literal arguments may mix types under homogeneous literals (cel-go's
    HomogeneousAggregateLiteralExemptFunctions, which a validator such as format()'s configures)."""
    struct_types: StructResolver | None = None
    """The message types the library declares, which literals such as `JSONPatch{...}` may build."""


class DeferredLibrary:
    """A library whose module is imported only when an expression first names one of its functions or types
    (`kcel eval '1 + 1'` needs none of Kubernetes' libraries): it knows those names before loading, and everything
    else a `Library` has (`overloads`, `types`...) is the loaded library's. Only a library that declares no macros,
    constants, validators or message types can wait: those an environment needs before any name is looked up."""

    def __init__(self, name: str, functions: frozenset[str], type_names: frozenset[str], load: Callable[[], Library]):
        self.name = name
        self.functions = functions
        self.type_names = type_names
        self._load = load
        self._library: Library | None = None

    @property
    def loaded(self) -> bool:
        return self._library is not None

    @property
    def library(self) -> Library:
        if self._library is None:  # a race only loads it twice
            self._library = self._load()
        return self._library

    def __getattr__(self, attribute: str) -> Any:  # overloads, types, macros...: the loaded library's own
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        return getattr(self.library, attribute)

    def __repr__(self) -> str:
        return f"DeferredLibrary({self.name!r}, loaded={self.loaded})"


def loaded(library: Library | DeferredLibrary) -> Library:
    """The library itself, a deferred one loaded now."""
    return library.library if isinstance(library, DeferredLibrary) else library
