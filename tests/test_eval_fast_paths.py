"""The evaluator's fast paths against plain readings of the CEL spec, over generated values.

Equality of two plain JSON values, `in` of a string over a list and the `all`/`exists` loops each have a faster
path than the general one; these properties check that they give CEL's answers, errors included, for values chosen
to trip a Python shortcut: `true` beside `1`, `1` beside `1.0` and `1u`, NaN (also the same NaN object on both
sides), `-0.0`, strings beside bytes, maps with numeric keys, lists beside tuples.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import kcel
from kcel.errors import EvalError
from kcel.eval.equality import cel_equals
from kcel.eval.runtime import in_container
from kcel.values import Uint

NAN = math.nan
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.integers(0, 3).map(Uint),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, NAN, math.inf]), st.sampled_from(["", "a", "b", "1"]),
    st.sampled_from([b"", b"a"]),
)  # fmt: skip
keys = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.booleans())
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.lists(children, max_size=3).map(tuple),
        st.dictionaries(keys, children, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=3),
    ),
    max_leaves=8,
)  # fmt: skip


def twin(value: Any, data: st.DataObject) -> Any:
    """A value built like `value`, sometimes with a scalar swapped for one Python calls equal (`1` for `true`,
    `1.0` for `1`, a fresh NaN) or a list given as a tuple: the pairs where Python's `==` and CEL's disagree."""
    if isinstance(value, dict):
        return {key: twin(item, data) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [twin(item, data) for item in value]
        return tuple(items) if data.draw(st.booleans()) else items
    if isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return data.draw(st.sampled_from([value, int(value), float(value), Uint(int(value))]))
    if isinstance(value, float) and math.isnan(value):
        return data.draw(st.sampled_from([value, float("nan")]))
    return value


def spec_equals(a: Any, b: Any) -> bool:
    """CEL equality as the spec words it: numbers by value across int, uint and double (NaN equals nothing),
    bool only with bool, lists element-wise, maps by key set (keys looked up by numeric value) and values."""
    number = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, number) and isinstance(b, number):
        return float(a) == float(b) if isinstance(a, float) or isinstance(b, float) else a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return len(a) == len(b) and all(_spec_find(b, key, value) for key, value in a.items())
    if isinstance(a, Sequence) and isinstance(b, Sequence) and not isinstance(a, (str, bytes)):
        if isinstance(b, (str, bytes)) or len(a) != len(b):
            return False
        return all(spec_equals(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _spec_find(m: Mapping[Any, Any], key: Any, value: Any) -> bool:
    same = [k for k in m if type(k) is type(key) or (not isinstance(k, bool) and not isinstance(key, bool)
                                                     and isinstance(k, int) and isinstance(key, int))]  # fmt: skip
    return any(k == key and spec_equals(value, m[k]) for k in same)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(values, st.data())
def test_equality_fast_paths_agree_with_the_spec(value: Any, data: st.DataObject) -> None:
    other = twin(value, data)
    assert cel_equals(value, other) is spec_equals(value, other)
    assert cel_equals(value, value) is spec_equals(value, value)  # the same NaN object on both sides
    unrelated = data.draw(values)
    assert cel_equals(value, unrelated) is spec_equals(value, unrelated)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.sampled_from(["", "a", "b", "1"]), st.lists(scalars, max_size=6))
def test_string_membership_agrees_with_the_spec(item: str, container: list[Any]) -> None:
    assert in_container(item, container) is any(spec_equals(item, element) for element in container)


class _Refuses:
    """A value whose Python equality raises (like an authorizer's): `in` must not ask it."""

    def __eq__(self, other: object) -> bool:
        raise EvalError("no such overload")

    __hash__ = None  # type: ignore[assignment]


def test_string_membership_skips_values_that_refuse_python_equality() -> None:
    assert in_container("a", [_Refuses(), "a"]) is True
    assert in_container("b", [_Refuses(), "a"]) is False


QUANTIFIERS = ["xs.all(x, 6 / x > 1)", "xs.exists(x, 6 / x > 2)", "xs.all(x, x)", "xs.exists(x, x)",
               "m.all(k, v, 6 / v > 1)", "m.exists(k, v, k == 'b' || 6 / v > 5)", "ks.all(k, k in ys)",
               "ks.exists(k, k in ys)", "ys.all(y, y in ys)", "ks.all(k, ks.exists(j, j in ys) && k in m)"]  # fmt: skip
items = st.one_of(st.integers(-2, 7), st.booleans())


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.sampled_from(QUANTIFIERS), st.lists(items, max_size=5), st.dictionaries(keys, items, max_size=4),
    st.lists(keys, max_size=4), st.lists(scalars, max_size=5),
)  # fmt: skip
def test_all_and_exists_loops_agree_with_the_metered_and_traced_programs(
    expression: str, xs: list[Any], m: dict[Any, Any], ks: list[Any], ys: list[Any]
) -> None:
    """The plain program's loops are written without the accumulator's `&&`/`||`, and test membership in a list
    of the input through a set of its strings; the metered and traced ones keep the macro's expansion and scan
    the list, so all three must agree on every value and every error."""
    program = kcel.Env(variables={name: "dyn" for name in ("xs", "m", "ks", "ys")}).compile(expression)
    activation = {"xs": xs, "m": m, "ks": ks, "ys": ys}
    plain = _outcome(lambda: program.evaluate(activation))
    assert plain == _outcome(lambda: program.evaluate_with_cost(activation, 1_000_000)[0])
    explained = program.explain(activation)
    assert plain == (("error", str(explained.error)) if explained.error else ("value", explained.value))


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "value", run()
    except EvalError as err:
        return "error", str(err)


# -- schema-typed variables (CRD rules) ------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "s": {"type": "string"}, "i": {"type": "integer"}, "b": {"type": "boolean"},
        "o": {"type": "object", "properties": {"s": {"type": "string"}}},
        "l": {"type": "array", "items": {"type": "string"}},
        "set": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}  # fmt: skip
TYPED = ["self.s == 'a'", "self.i + 1 > 1", "self.b || self.o.s == 'a'", "has(self.o) && self.o.s.size() > 0",
         "self.l.all(x, x in self.l)", "self.l.exists(x, x in self.set)", "self.m.all(k, self.m[k] == 'a')",
         "['a', 'b'].all(x, x in self.l || x in self.m)", "self == other", "self.o == other.o",
         "self.set == other.set", "self.l.map(x, self.m[x]).size() > 0",
         "has(self.s) ? self.s : 'none'", "has(self.l) && has(self.o.s) ? 1 : 2",
         "(self.i < 1) ? 'lt' : 'ge'", "self.s.startsWith('a') && self.i > 0 || !self.b",
         "self.l.exists(x, x.startsWith('b')) || self.i > 1", "self.s == 'a' && self.i in [1, 2]",
         "self.s in ['a', 'b'] || self.o.s in ['']", "self.m.all(k, self.m[k] in ['a'])",
         "self.l.map(x, x).size() == self.l.size()", "self.set.all(x, x in self.set && !(x in self.l))",
         "has(self.o.s) ? self.o.s : 'none'",
         "has(self.o.s) ? (has(self.o.s) ? self.o : other.o) : self.o"]  # fmt: skip
# A datetime converts to a timestamp on the way in; the fast variant skips that for schema objects (kcel.eval.codegen)
wrong = st.sampled_from([None, 1, True, 1.5, "a", [], {}, ["a"], {"s": "a"}, datetime(2024, 1, 1, tzinfo=timezone.utc)])
typed_values = {
    "s": st.one_of(st.sampled_from(["a", "b", ""]), wrong), "i": st.one_of(st.integers(-2, 2), wrong),
    "b": st.one_of(st.booleans(), wrong), "o": st.one_of(st.fixed_dictionaries({}, optional={"s": st.sampled_from(
        ["a", "", None, 1])}), wrong),
    "l": st.one_of(st.lists(st.sampled_from(["a", "b", None]), max_size=3), wrong),
    "set": st.one_of(st.lists(st.sampled_from(["a", "b"]), max_size=3, unique=True), wrong),
    "m": st.one_of(st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(["a", "b", None, 1]), max_size=2),
                   wrong),
}  # fmt: skip
objects = st.one_of(st.fixed_dictionaries({}, optional=typed_values), wrong)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.sampled_from(TYPED), objects, objects)
def test_schema_typed_reads_agree_with_the_metered_and_traced_programs(expression: str, self: Any, other: Any) -> None:
    """Plain programs read a typed field inline when a dict holds a value of the schema's class, convert a list or
    map read in a loop once per evaluation and compare typed objects field by field without converting; metered and
    traced programs do none of that. Data that does not match the schema must fail alike in all three."""
    from kcel.k8s.schemas.decltypes import schema_decl_type
    from kcel.k8s.schemas.schema import Schema

    decl = schema_decl_type(Schema.from_json(SCHEMA))
    assert decl is not None
    program = kcel.Env(variables={"self": decl.cel, "other": decl.cel}).compile(expression)
    activation = {"self": self, "other": other}
    plain = _outcome(lambda: program.evaluate(activation))
    assert plain == _outcome(lambda: program.evaluate_with_cost(activation, 1_000_000)[0])
    explained = program.explain(activation)
    assert plain == (("error", str(explained.error)) if explained.error else ("value", explained.value))


def _converting_equals(decl: Any, a: Any, b: Any) -> Any:
    """Typed object equality as upstream's unstructuredMap.Equal words it: every field converted, then compared."""
    from kcel.eval.equality import cel_equals as equals

    if decl.kind != "object":
        return equals(a, b)
    if not isinstance(b, Mapping):
        raise EvalError("no such overload")
    if len(a) != len(b):
        return False
    for key, mine in a.items():
        field = decl.fields_by_key.get(key)
        if field is None:
            if key in b and not equals(mine, b[key]):
                return False
            continue
        theirs = b.get(key)
        if (mine is None) != (theirs is None):
            return False
        if mine is not None:
            convert = field.type.converter or (lambda value: value)
            if not _converting_equals(field.type, convert(mine), convert(theirs)):
                return False
    return True


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.fixed_dictionaries({}, optional=typed_values), objects)
def test_schema_typed_equality_agrees_with_converting_every_field(self: Any, other: Any) -> None:
    from kcel.k8s.schemas.decltypes import schema_decl_type
    from kcel.k8s.schemas.schema import Schema

    decl = schema_decl_type(Schema.from_json(SCHEMA))
    assert decl is not None
    for a, b in ((self, other), (self, self), (self, dict(self))):
        assert _outcome(lambda a=a, b=b: decl.equals(a, b)) == _outcome(lambda a=a, b=b: _converting_equals(decl, a, b))
