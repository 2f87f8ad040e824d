"""cel-go's type assignability with type-parameter substitution (checker/types.go)."""

from __future__ import annotations

from kcel.checker.types import DYN, NULLABLE, CelType


class Substitution:
    """Bindings of type parameters found while resolving overloads."""

    def __init__(self) -> None:
        self.bound: dict[str, CelType] = {}

    def copy(self) -> Substitution:
        clone = Substitution()
        clone.bound = dict(self.bound)
        return clone

    def resolve(self, t: CelType, to_dyn: bool = False) -> CelType:
        """`t` with every bound parameter replaced (free ones by `dyn` when `to_dyn`)."""
        if t.kind == "param":
            bound = self.bound.get(t.name)
            if bound is not None and bound != t:
                return self.resolve(bound, to_dyn)
            return DYN if to_dyn else t
        if not t.params:
            return t
        params = tuple(self.resolve(p, to_dyn) for p in t.params)
        if all(new is old for new, old in zip(params, t.params, strict=True)):
            return t
        return CelType(t.name, params, t.kind)


def is_assignable(target: CelType, value: CelType, subst: Substitution) -> bool:
    """Whether a value of type `value` may be used where `target` is expected, binding params.

    cel-go's internalIsAssignable(value, target) (checker/types.go), whose argument order matters
    where type parameters and `null` meet: `target`'s parameter is tried first, and a parameter's
    binding widens to the more general of the two types, the value's type winning a tie.
    """
    if target.kind == "param":
        valid, bound = _substitution(value, target, subst)
        if valid or bound:
            return valid
    if value.kind == "param":
        return _substitution(target, value, subst)[0]
    if target.kind in ("dyn", "error") or value.kind in ("dyn", "error"):
        return True
    # The legacy checker's nullness: null goes wherever a nullable type does, and the other way round.
    if value.kind == "null":
        return is_nullable(target)
    if target.kind == "null":
        return is_nullable(value)
    if value.kind == "type":
        return target.kind == "type"
    if value.kind in ("list", "map", "opaque"):
        return (
            value.kind == target.kind
            and value.name == target.name
            and len(value.params) == len(target.params)
            and all(is_assignable(t, v, subst) for t, v in zip(target.params, value.params, strict=True))
        )
    return target.name == value.name and target.kind == value.kind


def is_nullable(t: CelType) -> bool:
    """Types `null` is assignable to (cel-go isLegacyNullable, or assignable from null itself): opaque types
    (optionals, timestamps and durations, which are opaque here, Kubernetes' IP, URL, Quantity...), messages
    (schema objects and protobuf messages), protobuf wrappers (`wrapper(int)`) and null. Not lists, maps,
    `type` or the primitives."""
    return t.kind in ("opaque", "message", "null") or t.decl is NULLABLE


def _substitution(other: CelType, param: CelType, subst: Substitution) -> tuple[bool, bool]:
    """(whether `param` may stand for `other`, whether `param` was already bound): cel-go isValidTypeSubstitution.

    A bound parameter accepts a type assignable to its binding and widens to the more general of the two
    (the other type when neither is less specific); a free one is bound unless that would be circular.
    """
    if other.kind == param.kind and other == param:
        return True, True
    bound = subst.bound.get(param.name)
    if bound is not None:
        if bound == other:
            return True, True
        if is_assignable(bound, other, subst):
            widened = most_general(other, bound)
            if not _occurs(param, widened, subst):
                subst.bound[param.name] = widened
            return True, True
        return False, True
    if not _occurs(param, other, subst):
        subst.bound[param.name] = other
        return True, False
    return False, False


def _occurs(param: CelType, t: CelType, subst: Substitution) -> bool:
    """Whether `param` is `t` or in it, following bindings one step at a time (cel-go notReferencedIn): a chain
    through `param` itself counts, so no binding makes a cycle."""
    if t.kind == "param":
        if t.name == param.name:
            return True
        bound = subst.bound.get(t.name)
        return bound is not None and bound != t and _occurs(param, bound, subst)
    return any(_occurs(param, p, subst) for p in t.params)


def most_general(a: CelType, b: CelType) -> CelType:
    return a if is_less_specific(a, b) else b


def is_less_specific(a: CelType, b: CelType) -> bool:
    """`a` is dyn/a parameter, or the same shape with parameters no more specific than b's."""
    if a.kind in ("dyn", "param"):
        return True
    if b.kind in ("dyn", "param"):
        return False
    if a.kind == "type" and b.kind == "type":  # cel-go: any type type is as specific as another
        return True
    if a.kind != b.kind or a.name != b.name or len(a.params) != len(b.params):
        return False
    return all(is_less_specific(x, y) for x, y in zip(a.params, b.params, strict=True))
