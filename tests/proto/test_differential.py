"""kcel against cel-expr-python (cel-cpp) on every field of the cel-spec suite's TestAllTypes, proto2 and proto3:
reading, presence, literals built from read fields, equality. Each expression yields a bool, so the two engines'
results compare without converting values between them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("google.protobuf", reason="protobuf messages need the kcel[protobuf] extra")
cel_cpp = pytest.importorskip("cel_expr_python.cel", reason="cel-expr-python (the test extra's oracle) is absent")

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory  # noqa: E402

import kcel  # noqa: E402

DESCRIPTORS = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "cel-spec" / "proto"
DESCRIPTORS = DESCRIPTORS / "messages.descriptors.json"
if not DESCRIPTORS.is_file():
    pytest.skip(f"no cel-spec descriptor set at {DESCRIPTORS} (../shared is absent)", allow_module_level=True)

# Fields cel-go and cel-cpp read differently: a google.protobuf.NullValue enum field is the int 0 in cel-go (GetFrom:
# an EnumNumber is an int64), and null in cel-cpp. kcel follows cel-go.
NOT_COMPARED = {"null_value", "optional_null_value", "repeated_null_value"}

CONTENT = {  # protobuf JSON; the same fields exist in proto2 and proto3 TestAllTypes
    "single_int32": -5, "single_int64": "7", "single_uint32": 9, "single_uint64": "11", "single_sint32": -3,
    "single_fixed64": "4", "single_float": 1.5, "single_double": -2.25, "single_bool": True, "single_string": "s",
    "single_bytes": "YWI=", "single_nested_message": {"bb": 3}, "standalone_enum": 2, "repeated_int32": [1, 2],
    "repeated_uint64": ["5"], "repeated_string": ["a", "b"], "repeated_nested_message": [{"bb": 1}],
    "map_string_string": {"k": "v"}, "map_int64_nested_type": {"3": {"payload": {"single_int32": 4}}},
    "map_bool_uint32": {"true": 1}, "single_int64_wrapper": "8", "single_string_wrapper": "w",
    "single_timestamp": "2020-01-01T00:00:00Z", "single_duration": "1.5s", "single_struct": {"a": 1, "b": [True, None]},
    "single_value": "x", "list_value": [1, "z"], "oneof_msg": {"bb": 9},
    "single_any": {"@type": "type.googleapis.com/google.protobuf.Int32Value", "value": 5},
}  # fmt: skip


def _message_class(name: str) -> Any:
    """The class from protobuf's default pool, where cel-expr-python looks types up (kcel then uses it too)."""
    import kcel.proto.registry  # noqa: F401 (loads the well-known files the set imports into the default pool)

    pool = descriptor_pool.Default()
    files = json_format.ParseDict(
        json.loads(DESCRIPTORS.read_text(encoding="utf-8")), descriptor_pb2.FileDescriptorSet()
    )
    for file in files.file:
        try:
            pool.FindFileByName(file.name)
        except KeyError:
            pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name))


def _expressions(name: str, fields: list[str]) -> list[str]:
    found = []
    for f in fields:
        if f in NOT_COMPARED:
            continue
        found += [f"has(m.{f})", f"has(e.{f})", f"dyn(m).{f} == m.{f}", f"e.{f} == {name}{{}}.{f}",
                  f"{name}{{{f}: m.{f}}}.{f} == m.{f}", f"{name}{{{f}: m.{f}}} == {name}{{{f}: m.{f}}}",
                  f"{name}{{{f}: m.{f}}} == {name}{{}}"]  # fmt: skip
    return [
        *found,
        "m == m",
        "m == e",
        f"e == {name}{{}}",
        "m.map_int64_nested_type[3].payload.single_int32 == 4",
        "m.map_bool_uint32[true] == 1u",
        "m.single_any + 1 == 6",
        "m.single_struct.b[0]",
        "m.list_value[1] == 'z'",
    ]


def typed(value: Any) -> Any:
    """A value with its kind kept, so that `true` does not equal `1`, nor `1` equal `1.0` (Python's `==` says they
    do); ints and uints alike (the C++ engine hands both back as Python ints), messages by their wire form."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", int(value))
    if isinstance(value, float):
        return ("double", repr(value))  # NaN equals NaN, -0.0 stays apart from 0.0
    if value is None or isinstance(value, (str, bytes)):
        return (type(value).__name__, value)
    if isinstance(value, (list, tuple)):
        return ("list", [typed(v) for v in value])
    if isinstance(value, dict) or hasattr(value, "items") and not hasattr(value, "SerializeToString"):
        return ("map", sorted((repr(typed(k)), typed(v)) for k, v in value.items()))
    if hasattr(value, "SerializeToString"):
        return ("message", type(value).__name__, value.SerializeToString(deterministic=True))
    return ("other", type(value).__name__, repr(value))


def test_typed_values_keep_their_kinds() -> None:
    assert typed(True) != typed(1) and typed(1) != typed(1.0) and typed([True]) != typed([1])
    assert typed({"a": 1}) == typed({"a": 1}) and typed(float("nan")) == typed(float("nan"))


def _outcome(evaluate: Any) -> tuple[str, Any]:
    try:
        return "value", evaluate()
    except Exception as err:  # noqa: BLE001 - each engine's failure is compared as "an error", not by text
        return "error", type(err).__name__


@pytest.mark.parametrize("package", ["proto2", "proto3"])
def test_every_field_as_cel_cpp_reads_and_builds_it(package: str) -> None:
    name = f"cel.expr.conformance.{package}.TestAllTypes"
    cls = _message_class(name)
    full = json_format.ParseDict(CONTENT, cls(), descriptor_pool=descriptor_pool.Default())
    activation = {"m": full, "e": cls()}
    ours = kcel.Env(variables={"m": name, "e": name}, messages=[json.loads(DESCRIPTORS.read_text(encoding="utf-8"))])
    theirs = cel_cpp.NewEnv(
        descriptor_pool=descriptor_pool.Default(), variables={"m": cel_cpp.Type(name), "e": cel_cpp.Type(name)}
    )

    def cpp(expr: str) -> Any:
        result = theirs.compile(expr).eval(data=activation)
        if result.type() == cel_cpp.Type.ERROR:
            raise RuntimeError(str(result.value()))
        return result.value()

    expressions = _expressions(name, [f.name for f in cls.DESCRIPTOR.fields])
    differences = [
        (expr, mine, other)
        for expr in expressions
        if (mine := _outcome(lambda e=expr: ours.compile(e).evaluate(activation)))[0]  # type: ignore[misc]
        != (other := _outcome(lambda e=expr: cpp(e)))[0]
        or (mine[0] == "value" and typed(mine[1]) != typed(other[1]))
    ]
    assert len(expressions) > 1000 and differences == []
