"""Runners for the schema kinds of k8s-cases: CEL types made from schemas, and schema-typed values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.k8s_values import decode, kcel_equal
from conformance.outcome import Case, Outcome, Unsupported
from kcel.eval import runtime
from kcel.eval.equality import cel_equals
from kcel.k8s.schemas import decltypes
from kcel.k8s.schemas.decltypes import DeclType, assign_type_name, object_type_names
from kcel.k8s.schemas.decltypes import with_type_and_object_meta as with_meta
from kcel.k8s.schemas.schema import Schema
from kcel.k8s.schemas.values import convert


def _decl(data: Any, root: bool = False) -> DeclType:
    decl = decltypes.schema_decl_type(Schema.from_json(data), root)
    assert decl is not None, "the schema is not visible to CEL"
    return decl


def _value(data: Any, schema: Any) -> Any:
    return convert(data, _decl(schema))


def _result(case: Case, problems: list[str]) -> Outcome:
    return Outcome(case.id, "failed", "; ".join(problems)) if problems else Outcome(case.id, "passed")


_DECL_TYPE_EXPECTATIONS = frozenset({
    "decl_type", "type_name", "field_count", "field_type_names", "field_defaults", "field_enum_values_subset_of",
    "field_max_elements", "required_fields", "semantics",  # semantics: the transcriber's prose, nothing to check
})  # fmt: skip


def schema_decl_type(case: Case) -> Outcome:
    """The CEL type of a schema; `decl_type: null` expects none (upstream ExpectNilType), every other expectation is
    optional, and one this runner does not know skips the case rather than passing it unchecked."""
    inputs, expect = case.data["inputs"], case.data["expect"]
    unknown = sorted(set(expect) - _DECL_TYPE_EXPECTATIONS)
    if unknown:
        raise Unsupported(f"unknown expectation {', '.join(unknown)}")
    decl = decltypes.schema_decl_type(Schema.from_json(inputs["schema"]), inputs.get("is_resource_root", False))
    if "decl_type" in expect:
        if expect["decl_type"] is not None:
            raise Unsupported("decl_type expectation other than null")
        return _result(case, [] if decl is None else [f"expected no type, got {decl.name}"])
    if decl is None:
        return _result(case, ["the schema is not visible to CEL"])
    problems = []
    if "type_name" in expect and decl.name != expect["type_name"]:
        problems.append(f"type {decl.name}")
    if "field_count" in expect and len(decl.fields) != expect["field_count"]:
        problems.append(f"{len(decl.fields)} fields")
    for name, type_name in expect.get("field_type_names", {}).items():
        field = decl.fields.get(name)
        if field is None or field.type.name != type_name:
            problems.append(f"field {name}: {'absent' if field is None else field.type.name}")
    for name, default in expect.get("field_defaults", {}).items():
        if not kcel_equal(decode(default), decl.fields[name].default):
            problems.append(f"default of {name}: {decl.fields[name].default!r}")
    for name, allowed in expect.get("field_enum_values_subset_of", {}).items():
        values = [decode(v) for v in allowed]
        if not all(any(kcel_equal(v, e) for v in values) for e in decl.fields[name].enum or ()):
            problems.append(f"enum of {name}: {decl.fields[name].enum}")
    for name, size in expect.get("field_max_elements", {}).items():
        if decl.fields[name].type.max_elements != size:
            problems.append(f"max elements of {name}: {decl.fields[name].type.max_elements}")
    required = sorted(f.name for f in decl.fields.values() if f.required)
    if "required_fields" in expect and required != sorted(expect["required_fields"]):
        problems.append(f"required fields {required}")
    return _result(case, problems)


def schema_decl_types(case: Case) -> Outcome:
    inputs, expect = case.data["inputs"], case.data["expect"]
    named = assign_type_name(_decl(inputs["schema"], inputs.get("is_resource_root", False)), inputs["root_type_name"])
    names = object_type_names(named)
    ok = sorted(names) == sorted(expect["object_type_names"])
    return _result(case, [] if ok else [f"object types {names}"])


def schema_max_elements(case: Case) -> Outcome:
    inputs, expect = case.data["inputs"], case.data["expect"]
    decl = decltypes.schema_decl_type(Schema.from_json(inputs["schema"]), inputs.get("is_resource_root", False))
    wanted = expect.get("max_elements", expect.get("max_elements_if_decl_type_not_nil"))
    if "decl_type" in expect and expect["decl_type"] is None:  # upstream ExpectNilType
        return _result(case, [] if decl is None else [f"expected no type, got {decl.name}"])
    if decl is None:
        ok = "max_elements_if_decl_type_not_nil" in expect
        return _result(case, [] if ok else ["the schema is not visible to CEL"])
    return _result(case, [] if decl.max_elements == wanted else [f"max elements {decl.max_elements}"])


def with_type_and_object_meta(case: Case) -> Outcome:
    inputs, expect = case.data["inputs"], case.data["expect"]
    schema = Schema.from_json(inputs["schema"])
    result = with_meta(schema)
    problems = []
    meta = (result.properties or {})["metadata"].properties or {}
    for key, prop in (("metadata_name_max_length", "name"), ("result_metadata_name_max_length", "name"),
                      ("metadata_generate_name_max_length", "generateName")):  # fmt: skip
        if key in expect and meta[prop].max_length != expect[key]:
            problems.append(f"{prop} maxLength {meta[prop].max_length}")
    decl = decltypes.schema_decl_type(schema, True)
    assert decl is not None
    meta_fields = decl.fields["metadata"].type.fields
    for key, prop in (("decl_type_metadata_name_max_elements", "name"),
                      ("decl_type_metadata_generate_name_max_elements", "generateName")):  # fmt: skip
        if key in expect and meta_fields[prop].type.max_elements != expect[key]:
            problems.append(f"{prop} max elements {meta_fields[prop].type.max_elements}")
    if expect.get("second_application_returns_same_schema") and with_meta(result) is not result:
        problems.append("a second application changed the schema")
    if expect.get("input_unchanged"):
        original = (schema.properties or {})["metadata"].properties or {}
        if original["name"].max_length is not None or original["name"].format != "k8s-short-name":
            problems.append("the input schema changed")
    return _result(case, problems)


def unstructured_equality(case: Case) -> Outcome:
    lhs, rhs, expect = case.data["inputs"]["lhs"], case.data["inputs"]["rhs"], case.data["expect"]
    left, right = _value(lhs["value"], lhs["schema"]), _value(rhs["value"], rhs["schema"])
    both_ways = (_decl(lhs["schema"]).equals(left, right), _decl(rhs["schema"]).equals(right, left))
    ok = both_ways == (expect["equal"], expect["equal"])
    return _result(case, [] if ok else [f"lhs == rhs, rhs == lhs: {both_ways}"])


def unstructured_list(case: Case) -> Outcome:
    inputs, expect = case.data["inputs"], case.data["expect"]
    items = _value(inputs["list"], inputs["schema"])
    item_equals = _decl(inputs["item_schema"]).equals
    problems = []
    if runtime.size(items) != expect["size"]:
        problems.append(f"size {runtime.size(items)}")
    expected_items = [_value(v, inputs["item_schema"]) for v in inputs["list"]]
    if not all(item_equals(a, b) for a, b in zip(runtime.iterate(items), expected_items, strict=True)):
        problems.append("iteration order")
    if not all(runtime.in_container(item, items) for item in expected_items):
        problems.append("an element is not contained")
    if any(runtime.in_container(_value(x["value"], x["schema"]), items) for x in inputs["not_contains"]):
        problems.append("contains an element it should not")
    added = runtime.add(items, _value(inputs["addition"], inputs["schema"]))
    wanted = [_value(v, inputs["item_schema"]) for v in expect["list_plus_addition"]]
    if len(added) != len(wanted) or not all(item_equals(a, b) for a, b in zip(added, wanted, strict=True)):
        problems.append(f"list + addition = {added!r}")
    return _result(case, problems)


def unstructured_map(case: Case) -> Outcome:
    inputs, expect = case.data["inputs"], case.data["expect"]
    value = _value(inputs["map"], inputs["schema"])
    decl = _decl(inputs["schema"])
    problems = []
    if runtime.size(value) != expect["size"]:
        problems.append(f"size {runtime.size(value)}")
    for key, wanted in inputs["map"].items():
        access = decl.field_access(key) if decl.kind == "object" else None
        got = access.read(value) if access is not None else runtime.select(value, key)
        if not cel_equals(got, wanted):
            problems.append(f"get {key}: {got!r}")
        if not (access.test(value) if access is not None else runtime.in_container(key, value)):
            problems.append(f"does not contain {key}")
    if sorted(runtime.iterate(value)) != sorted(inputs["map"]):
        problems.append("iteration keys")
    for other in inputs["not_contains"]:
        access = decl.field_access(other["value"]) if decl.kind == "object" else None
        if access is not None or (decl.kind != "object" and runtime.in_container(other["value"], value)):
            problems.append(f"contains {other['value']}")
    return _result(case, problems)


RUNNERS: dict[str, Callable[[Case], Outcome]] = {
    "schema_decl_type": schema_decl_type, "schema_decl_types": schema_decl_types,
    "schema_max_elements": schema_max_elements, "with_type_and_object_meta": with_type_and_object_meta,
    "unstructured_equality": unstructured_equality, "unstructured_list": unstructured_list,
    "unstructured_map": unstructured_map,
}  # fmt: skip
