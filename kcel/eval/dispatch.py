"""Runtime dispatch: pick an overload by the Python types of the arguments (for `dyn` values).

Each CEL type in a signature becomes a predicate on a Python value. A dispatcher for one
function and arity tries its overloads in table order and calls the first whose predicates
all hold; none holding is cel-go's `no such overload`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kcel.checker.decls import Overload
from kcel.checker.types import CelType
from kcel.errors import CostLimitExceeded
from kcel.eval.runtime import charge, no_such_overload
from kcel.values import Optional, TypedList, TypeValue, Uint

Predicate = Callable[[Any], bool]
_CLASSES: dict[str, type] = {}


def register_class(type_name: str, cls: type) -> None:
    """Tell dispatch which Python class carries values of an opaque CEL type (e.g. net.IP)."""
    _CLASSES[type_name] = cls


def _any(value: Any) -> bool:
    return True


def _exact(cls: type) -> Predicate:
    return lambda value: type(value) is cls


def _list(value: Any) -> bool:
    return type(value) is list or type(value) is tuple or isinstance(value, TypedList)


def _map(value: Any) -> bool:
    return isinstance(value, Mapping)


_PRIMITIVES: dict[str, Predicate] = {
    "bool": _exact(bool), "int": _exact(int), "uint": _exact(Uint), "double": _exact(float), "string": _exact(str),
    "bytes": _exact(bytes), "null_type": lambda v: v is None, "optional_type": _exact(Optional),
    "type": _exact(TypeValue),
}  # fmt: skip


def predicate(cel_type: CelType) -> Predicate:
    if cel_type.kind in ("param", "dyn"):
        return _any
    if cel_type.kind == "list":
        return _list
    if cel_type.kind == "map":
        return _map
    if cel_type.name in _PRIMITIVES:
        return _PRIMITIVES[cel_type.name]
    cls = _CLASSES.get(cel_type.name)
    if cls is None:
        return lambda value: getattr(value, "cel_type_name", None) == cel_type.name
    return _exact(cls)


def dispatcher(overloads: Sequence[Overload]) -> Callable[..., Any]:
    """One callable for all overloads of a function with the same arity and call style."""
    table = [(tuple(predicate(t) for t in o.args), o.impl) for o in overloads]
    function = overloads[0].function
    if len(table) == 1:
        checks, impl = table[0]
        if all(c is _any for c in checks):
            return impl
        if len(checks) == 1:
            (check,) = checks

            def unary(a: Any) -> Any:
                if check(a):
                    return impl(a)
                raise no_such_overload(function, (a,))

            return unary

    arity = len(table[0][0])
    if arity == 1:
        singles = [(checks[0], impl) for checks, impl in table]

        def dispatch1(a: Any) -> Any:
            for check, impl in singles:
                if check(a):
                    return impl(a)
            raise no_such_overload(function, (a,))

        return dispatch1
    if arity == 2:
        pairs = [(checks[0], checks[1], impl) for checks, impl in table]

        def dispatch2(a: Any, b: Any) -> Any:
            for first, second, impl in pairs:
                if first(a) and second(b):
                    return impl(a, b)
            raise no_such_overload(function, (a, b))

        return dispatch2

    def dispatch(*args: Any) -> Any:
        for checks, impl in table:
            if all(check(arg) for check, arg in zip(checks, args, strict=True)):
                return impl(*args)
        raise no_such_overload(function, args)

    return dispatch


class Meter:
    """Running cost of one metered evaluation; raises once it goes past the limit."""

    __slots__ = ("absorbed", "cost", "limit")

    def __init__(self, limit: float) -> None:
        self.cost = 0
        self.limit = limit
        self.absorbed = False  # an error was caught (absorbed or charged): the cost may be an approximation

    def add(self, amount: int) -> None:
        self.cost += amount
        if self.cost > self.limit:
            raise CostLimitExceeded(self.cost)


# The functions Kubernetes' CallCost prices by name (apiserver pkg/cel/library/cost.go), which it does even for a
# call without an overload id; containsIP and containsCIDR add the string's parse only for their `_string` ids.
KUBERNETES_PRICED = frozenset((
    "check", "serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed", "reason",
    "error", "errored", "fieldSelector", "labelSelector", "isSorted", "sum", "max", "min", "indexOf", "lastIndexOf",
    "includes", "url", "lowerAscii", "upperAscii", "substring", "trim", "jsonpatch.escapeKey", "replace", "split",
    "join", "find", "findAll", "cidr", "isIP", "isCIDR", "ip", "ip.isCanonical", "masked", "prefixLength", "family",
    "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "containsIP",
    "containsCIDR", "quantity", "isQuantity", "semver", "isSemver", "validate", "format.named", "sign", "asInteger",
    "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor",
    "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery",
))  # fmt: skip


def _cost_without_overload_id(overload: Overload, overloads: Sequence[Overload]) -> Any:
    """The cost of a call the checker left with several candidate overloads: cel-go plans it with no overload id
    (planner resolveFunction), so neither a library's tracker nor cel-go's switch on the id applies, only
    Kubernetes' switch on the function name; otherwise the default, 1 (None)."""
    if overload.function not in KUBERNETES_PRICED:
        return None
    if overload.function in ("containsIP", "containsCIDR") and overload.id.endswith("_string"):
        return next((o.cost for o in overloads if not o.id.endswith("_string")), overload.cost)
    return overload.cost


def metered_dispatcher(overloads: Sequence[Overload]) -> Callable[..., Any]:
    """Like `dispatcher`, but takes the Meter first and charges the chosen overload's cost.

    Several overloads mean the checker could not pin the call to one (its arguments are `dyn`): then the
    overload's own cost applies only where Kubernetes prices the function by name."""
    costs = [o.cost if len(overloads) == 1 else _cost_without_overload_id(o, overloads) for o in overloads]
    table = [(tuple(predicate(t) for t in o.args), o.impl, cost) for o, cost in zip(overloads, costs, strict=True)]
    function = overloads[0].function

    def dispatch(meter: Meter, *args: Any) -> Any:
        for checks, impl, cost in table:
            if all(check(arg) for check, arg in zip(checks, args, strict=True)):
                if cost is None:
                    meter.add(1)
                    return impl(*args)
                return charge(meter, cost, impl, args)
        error = no_such_overload(function, args)
        # cel-go charges the call whose result is "no such overload": by the overload's own tracker when the checker
        # chose one (`dyn(1).slice(0, 1)` costs list_slice's 12), else 1.
        meter.add(1 if len(table) > 1 or table[0][2] is None else table[0][2](args, error))
        raise error

    return dispatch
