"""cel-go's type assignability with type-parameter substitution (checker/types.go)."""

from __future__ import annotations

from kcel.checker.types import DYN, CelType


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
    """Whether a value of type `value` may be used where `target` is expected, binding params."""
    param_result = _param_assignable(target, value, subst)
    if param_result is not None:
        return param_result
    if target.kind in ("dyn", "error") or value.kind in ("dyn", "error"):
        return True
    if target.kind == "type":
        return value.kind == "type"
    if target.kind in ("list", "map", "opaque"):
        return (
            value.kind == target.kind
            and value.name == target.name
            and len(value.params) == len(target.params)
            and all(is_assignable(t, v, subst) for t, v in zip(target.params, value.params, strict=True))
        )
    if target.kind == "message" and value.kind == "null":
        return True
    return target.name == value.name and target.kind == value.kind


def _param_assignable(target: CelType, value: CelType, subst: Substitution) -> bool | None:
    for param, other, param_first in ((target, value, True), (value, target, False)):
        if param.kind != "param":
            continue
        bound = subst.bound.get(param.name)
        if bound is not None:
            ok = is_assignable(bound, other, subst) if param_first else is_assignable(other, bound, subst)
            if ok:
                subst.bound[param.name] = most_general(bound, other)
            return ok
        if not _occurs(param, other, subst):
            subst.bound[param.name] = other
            return True
        return other.kind == "param" and other.name == param.name
    return None


def _occurs(param: CelType, t: CelType, subst: Substitution) -> bool:
    t = subst.resolve(t)
    if t.kind == "param":
        return t.name == param.name
    return any(_occurs(param, p, subst) for p in t.params)


def most_general(a: CelType, b: CelType) -> CelType:
    return a if is_less_specific(a, b) else b


def is_less_specific(a: CelType, b: CelType) -> bool:
    """`a` is dyn/a parameter, or the same shape with parameters no more specific than b's."""
    if a.kind in ("dyn", "param"):
        return True
    if b.kind in ("dyn", "param"):
        return False
    if a.kind != b.kind or a.name != b.name or len(a.params) != len(b.params):
        return False
    return all(is_less_specific(x, y) for x, y in zip(a.params, b.params, strict=True))


def is_exactly(a: CelType, b: CelType) -> bool:
    return a == b
