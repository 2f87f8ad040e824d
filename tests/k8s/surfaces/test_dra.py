"""DRA device selectors: k8s.io/dynamic-resource-allocation cel/compile_test.go (TestCEL, TestCELFeatureCombinations,
at each release's tag), the API server's selector validation (pkg/apis/resource/validation validateSelector and its
tests), and the scheduler's selection (structured allocator selectorsMatch)."""

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s.surfaces import dra

DRIVER = "dra.example.com"
ON = ("api/all",)  # the alpha and beta resource.k8s.io versions some tests use, assumed switched on
NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional"
    " fields"
)
TEN = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
NESTED = (
    f"{TEN}.all(x, {TEN}.all(y, {TEN}.all(z, {TEN}.all(z2, {TEN}.all(z3, {TEN}.all(z4, {TEN}.all(z5, "
    "int('1'.find('[0-9]*')) < 100)))))))"
)


def device(attributes: dict[str, Any] | None = None, capacity: dict[str, Any] | None = None, **fields: Any) -> Any:
    """A ResourceSlice device (v1 shape) with the given attributes (`{"int": 1}`...) and capacities (quantities)."""
    quantities = {name: {"value": quantity} for name, quantity in (capacity or {}).items()}
    return {"name": "d", "attributes": attributes or {}, "capacity": quantities, **fields}


def run(expression: str, version: str = "1.37", stored: bool = True, gates: dict[str, bool] | None = None,
        driver: str = DRIVER, **device_fields: Any) -> tuple[dra.Compiled, dra.DeviceResult]:  # fmt: skip
    compiled = dra.compile_selector(expression, version, stored=stored, feature_gates=gates)
    value = dra.device_value(device(**device_fields), driver, version, feature_gates=gates)
    return compiled, dra.device_matches(compiled, value)


def expensive_attributes() -> dict[str, Any]:
    """32 attributes with names of the longest length (compile_test.go "expensive")."""
    return {f"{DRIVER}/{'x' * (32 - len(f'-{i}'))}-{i}": {"string": "abc"} for i in range(32)}


def values(count: int) -> dict[str, Any]:
    return {"name": {"strings": [f"value-{i}" for i in range(count)]}}


# -- TestCEL (master = 1.37): the stored-expression environment, with and without list-type attributes -----------

ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""
ALL_ATTRIBUTES = {
    "bool": {"bool": True},
    "int": {"int": 1},
    "string": {"string": "fish"},
    "version": {"version": "1.0.0"},
}
NAME = 'device.attributes["dra.example.com"].name'
NAMES = 'device.attributes["dra.example.com"].names'
ITERABLE = 5 + 6 * 64  # the macro's loop condition and step, times the larger of 64 and 48 (list attributes)

# (name, expression, driver, attributes, capacity, expected: True/False (match), "!error" (runtime) or "?error"
# (compile), estimated cost)
TEST_CEL: list[tuple[str, str, str, dict[str, Any], dict[str, str], bool | str, int]] = [
    ("true", "true", "", {}, {}, True, 0),
    ("false", "false", "", {}, {}, False, 0),
    ("runtime-error-lookup-identifier", 'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
     "", {}, {}, "!no such key: noSuchAttr", 6),
    ("runtime-error-lookup-map", 'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
     "", {}, {}, "!no such key: noSuchAttr", 6),
    ("domain-check-negative", '"no-such-domain" in device.attributes', "", {}, {}, False, 3),
    ("domain-check-positive", '"dra.example.com" in device.attributes', "",
     {"dra.example.com/something": {"bool": True}}, {}, True, 3),
    ("empty-driver-name", 'device.driver == ""', "", {}, {}, True, 2),
    ("real-driver-name", 'device.driver == "dra.example.com"', DRIVER, {}, {}, True, 4),
    ("driver-name-qualifier", NAME, DRIVER, {"name": {"bool": True}}, {}, True, 4),
    ("driver-name-qualifier-map-lookup", 'device.attributes["dra.example.com"]["name"]', DRIVER,
     {"name": {"bool": True}}, {}, True, 4),
    ("bind", 'cel.bind(dra, device.attributes["dra.example.com"], dra.name)', DRIVER, {"name": {"bool": True}}, {},
     True, 15),
    ("qualified-attribute-name", 'device.attributes["other.example.com"].name', DRIVER,
     {"other.example.com/name": {"bool": True}}, {}, True, 4),
    ("int", f"{NAME} > 0", DRIVER, {"name": {"int": 1}}, {}, True, 5),
    ("string", f'{NAME} == "fish"', DRIVER, {"name": {"string": "fish"}}, {}, True, 5),
    ("macro-exists-on-int", f"{NAME}.exists(x, x > 0)", DRIVER, {"name": {"int": 1}}, {},
     "!got 'types.Int', expected iterable type", ITERABLE),
    ("macro-exists-on-bool", f"{NAME}.exists(x, x == true)", DRIVER, {"name": {"bool": True}}, {},
     "!got 'types.Bool', expected iterable type", ITERABLE),
    ("macro-exists-on-string", f'{NAME}.exists(x, x == "fish")', DRIVER, {"name": {"string": "fish"}}, {},
     "!got 'types.String', expected iterable type", ITERABLE),
    ("list-result-type-causes-match-error", NAMES, DRIVER, {"names": {"strings": ["fish", "bird"]}}, {},
     "!CEL result of type list could not be converted to bool: type conversion error from list to 'bool'", 4),
    ("list-of-bool", f"{NAMES}.size() == 2", DRIVER, {"names": {"bools": [True, False]}}, {}, True, 6),
    ("list-of-int", f"{NAMES}.size() == 2", DRIVER, {"names": {"ints": [1, 2]}}, {}, True, 6),
    ("list-of-semver", f"{NAMES}.size() == 2", DRIVER, {"names": {"versions": ["1.0.0", "2.0.0"]}}, {}, True, 6),
    ("macro-on-list-of-int", f"{NAMES}.exists(x, x > 0)", DRIVER, {"names": {"ints": [1, 2]}}, {}, True, ITERABLE),
    ("macro-on-list-of-string", f'{NAMES}.all(x, x != "")', DRIVER, {"names": {"strings": ["fish", "bird"]}}, {},
     True, 5 + 4 * 64),
    ("macro-on-list-of-semver", f'{NAMES}.all(x, x.isGreaterThan(semver("0.0.1")))', DRIVER,
     {"names": {"versions": ["1.0.0", "2.0.0"]}}, {}, True, ITERABLE),
    ("in-operator-on-list", f"1 in {NAMES}", DRIVER, {"names": {"ints": [1, 2, 3]}}, {}, True, 4 + 64),
    ("version", f'{NAME}.isGreaterThan(semver("0.0.1"))', DRIVER, {"name": {"version": "1.0.0"}}, {}, True, 6),
    ("version_v", f'{NAME}.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)', DRIVER,
     {"name": {"version": "1.0.0"}}, {}, True, 7),
    ("macro-exists-on-version", f'{NAME}.exists(x, x.isGreaterThan(semver("0.0.1")))', DRIVER,
     {"name": {"version": "1.0.0"}}, {}, "!got 'cel.Semver', expected iterable type", 5 + 7 * 64),
    ("quantity", 'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', DRIVER, {},
     {"name": "1Mi"}, True, 6),
    ("check-positive", '"name" in device.capacity["dra.example.com"] && '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', DRIVER, {}, {"name": "1Mi"}, True, 10),
    ("check-negative", '!("name" in device.capacity["dra.example.com"]) || '
     'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', "", {}, {}, True, 11),
    ("all", ALL, DRIVER, ALL_ATTRIBUTES, {"quantity": "1Mi"}, True, 52),
    ("many", f"{NAME[:-5]}.a && {NAME[:-5]}.b && {NAME[:-5]}.c", DRIVER,
     {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}}, {}, True, 12),
    ("check_attribute_domains", 'device.attributes.exists_one(x, x == "dra.example.com")', DRIVER,
     {"services": {"string": "some_example_value"}}, {}, True, 164),
    ("check_attribute_ids", 'device.attributes["dra.example.com"].exists_one(x, x == "services")', DRIVER,
     {"services": {"string": "some_example_value"}}, {}, True, 133),
    ("split_attribute", 'device.attributes["dra.example.com"].services.split("example").size() >= 2', DRIVER,
     {"services": {"string": "some_example_value"}}, {}, True, 19),
    ("regexp_attribute", 'device.attributes["dra.example.com"].services.matches("[^a]?sym")', DRIVER,
     {"services": {"string": "asymetric"}}, {}, True, 18),
    ("check_capacity_domains", 'device.capacity.exists_one(x, x == "dra.example.com")', DRIVER, {},
     {"memory": "1Mi"}, True, 164),
    ("check_capacity_ids", 'device.capacity["dra.example.com"].exists_one(x, x == "memory")', DRIVER, {},
     {"memory": "1Mi"}, True, 133),
    ("expensive", NESTED, DRIVER, expensive_attributes(), {}, "!actual cost limit exceeded", 85555551),
    ("syntax-error", "?!", "", {}, {}, "?Syntax error", 0),
    ("type-error", "1", "", {}, {}, "?must evaluate to bool or the unknown type, not int", 0),
]  # fmt: skip


@pytest.mark.parametrize("list_types", [False, True])
@pytest.mark.parametrize(("expression", "driver", "attributes", "capacity", "expected", "cost"),
                         [case[1:] for case in TEST_CEL], ids=[case[0] for case in TEST_CEL])  # fmt: skip
def test_cel(expression: str, driver: str, attributes: dict[str, Any], capacity: dict[str, str],
             expected: bool | str, cost: int, list_types: bool) -> None:  # fmt: skip
    gates = {"DRAListTypeAttributes": list_types}
    compiled, result = run(expression, gates=gates, driver=driver, attributes=attributes, capacity=capacity)
    if isinstance(expected, str) and expected.startswith("?"):
        assert compiled.program is None and expected[1:] in compiled.error
        return
    assert compiled.error == "" and compiled.max_cost == cost
    assert result.cost <= cost  # the estimate bounds the actual cost (TestCEL's underestimate check)
    if isinstance(expected, str):
        assert expected[1:] in result.error and not result.matches
    else:
        assert (result.matches, result.error) == (expected, "")


ALLOW = "device.allowMultipleAllocations == false"
FISH = 'device.attributes["dra.example.com"].attr.includes("fish")'


@pytest.mark.parametrize(("expression", "stored", "gates", "allow", "error"), [
    ("device.allowMultipleAllocations == true", True, {"DRAConsumableCapacity": True}, True, ""),
    (ALLOW, True, {"DRAConsumableCapacity": True}, None, ""),
    (ALLOW, True, {"DRAConsumableCapacity": True}, False, ""),
    (ALLOW, False, {"DRAConsumableCapacity": True}, False, ""),
    (ALLOW, False, {"DRAConsumableCapacity": False}, None, "undefined field 'allowMultipleAllocations'"),
    (FISH, False, {"DRAListTypeAttributes": False}, None, "undeclared reference to 'includes'"),
    (FISH, False, {"DRAListTypeAttributes": True}, None, ""),
])  # fmt: skip
def test_cel_new_expressions_follow_the_gates(
    expression: str, stored: bool, gates: dict[str, bool], allow: bool | None, error: str
) -> None:
    """TestCEL's allow_multiple_allocations_* and includes-function-compilation-* cases (1.37 estimates `includes`
    by the lists library, see below)."""
    fields = {"allowMultipleAllocations": allow} if allow is not None else {}
    attributes = {"attr": {"string": "fish"}}
    compiled, result = run(expression, stored=stored, gates=gates, attributes=attributes, **fields)
    if error:
        assert compiled.program is None and error in compiled.error
    else:
        assert (result.matches, compiled.max_cost) == (True, 3 if "allow" in expression else 4 + 64)


# -- 1.36's `includes` (compile_test.go at v0.36.0: new expressions with DRAListTypeAttributes) --------------------

INCLUDES: list[tuple[str, str, dict[str, Any], bool | str, int]] = [
    ("includes-function-can-evaluate", f'{NAME}.includes("fish")', {"name": {"strings": ["fish", "bird"]}},
     True, 4 + 48),
    ("includes-on-bool-scalar-positive", f"{NAME}.includes(true)", {"name": {"bool": True}}, True, 52),
    ("includes-on-bool-scalar-negative", f"{NAME}.includes(true)", {"name": {"bool": False}}, False, 52),
    ("includes-on-bool-list-positive", f"{NAME}.includes(true)", {"name": {"bools": [True, False]}}, True, 52),
    ("includes-on-bool-list-negative", f"{NAME}.includes(false)", {"name": {"bools": [True, True]}}, False, 52),
    ("includes-on-int-scalar-positive", f"{NAME}.includes(1)", {"name": {"int": 1}}, True, 52),
    ("includes-on-int-scalar-negative", f"{NAME}.includes(1)", {"name": {"int": 2}}, False, 52),
    ("includes-on-int-list-positive", f"{NAME}.includes(1)", {"name": {"ints": [1, 2]}}, True, 52),
    ("includes-on-int-list-negative", f"{NAME}.includes(3)", {"name": {"ints": [1, 2]}}, False, 52),
    ("includes-on-string-scalar-negative", f'{NAME}.includes("bird")', {"name": {"string": "fish"}}, False, 52),
    ("includes-on-string-list-negative", f'{NAME}.includes("cat")', {"name": {"strings": ["fish", "bird"]}},
     False, 52),
    ("includes-on-semver-scalar-positive", f'{NAME}.includes(semver("1.0.0"))',
     {"name": {"version": "1.0.0"}}, True, 53),
    ("includes-on-semver-list-negative", f'{NAME}.includes(semver("3.0.0"))',
     {"name": {"versions": ["1.0.0", "2.0.0"]}}, False, 53),
    ("includes-on-very-long-list-positive", f'{NAME}.includes("value-48")', values(48), False, 52),
    ("includes-on-very-long-list-runtime-error", f'{NAME}.includes("value-49")', values(49),
     "!'includes' function cannot be applied to lists longer than 48 values", 52),
]  # fmt: skip


@pytest.mark.parametrize(("expression", "attributes", "expected", "cost"), [case[1:] for case in INCLUDES],
                         ids=[case[0] for case in INCLUDES])  # fmt: skip
def test_includes_in_1_36(expression: str, attributes: dict[str, Any], expected: bool | str, cost: int) -> None:
    gates = {"DRAListTypeAttributes": True}
    compiled, result = run(expression, "1.36", stored=False, gates=gates, attributes=attributes)
    assert compiled.max_cost == cost
    if isinstance(expected, str):
        assert (result.matches, result.error) == (False, expected[1:])
    else:
        assert (result.matches, result.error) == (expected, "")


def test_includes_from_1_37_is_the_lists_library() -> None:
    """kubernetes#140016 moved `includes` into the lists library (ListsVersion 1, in the 1.37 base environment): its
    estimate is the attribute's size (64) rather than 48, and no list is too long for it."""
    compiled, result = run(f'{NAME}.includes("value-49")', attributes=values(60))
    assert (compiled.max_cost, result.matches, result.error) == (4 + 64, True, "")
    new = dra.compile_selector(f"{NAME}.includes(1)", "1.37", feature_gates={"DRAListTypeAttributes": True})
    assert new.max_cost == 4 + 64
    assert "undeclared reference to 'includes'" in dra.compile_selector(f"{NAME}.includes(1)", "1.37").error


def test_1_36_declares_includes_for_stored_expressions_without_the_gate() -> None:
    compiled, result = run(f"{NAME}.includes(1)", "1.36", attributes={"name": {"ints": [1]}})
    assert compiled.max_cost == 52  # `any` attributes: list values are not handed to CEL without the gate
    assert result.error == "attribute name: unsupported attribute value"
    assert "undeclared reference to 'includes'" in dra.compile_selector(f"{NAME}.includes(1)", "1.36").error


# -- TestCELFeatureCombinations (master) ----------------------------------------------------------------------------

COMBINATION_EXPRESSIONS = {
    "scalar-attribute": ('device.attributes["dra.example.com"].ready', {"ready": {"bool": True}}),
    "list-attribute": ('device.attributes["dra.example.com"].ids.exists(id, id == 1)', {"ids": {"ints": [1, 2]}}),
    "includes-function": ('device.attributes["dra.example.com"].name.includes("fish")', {"name": {"string": "fish"}}),
    "multiple-allocations": ("device.allowMultipleAllocations", {}),
    "list-attribute-with-multiple-allocations": (
        'device.allowMultipleAllocations && device.attributes["dra.example.com"].ids.exists(id, id == 1)',
        {"ids": {"ints": [1, 2]}},
    ),
}
EVERYTHING = set(COMBINATION_EXPRESSIONS)


@pytest.mark.parametrize(("stored", "capacity", "lists", "compiles"), [
    (True, False, False, EVERYTHING), (True, True, False, EVERYTHING), (True, False, True, EVERYTHING),
    (True, True, True, EVERYTHING),
    (False, False, False, {"scalar-attribute"}),
    (False, True, False, {"scalar-attribute", "multiple-allocations"}),
    (False, False, True, {"scalar-attribute", "list-attribute", "includes-function"}),
    (False, True, True, EVERYTHING),
])  # fmt: skip
def test_feature_combinations(stored: bool, capacity: bool, lists: bool, compiles: set[str]) -> None:
    gates = {"DRAConsumableCapacity": capacity, "DRAListTypeAttributes": lists}
    compiled = set()
    for name, (expression, attributes) in COMBINATION_EXPRESSIONS.items():
        selector, result = run(expression, stored=stored, gates=gates, attributes=attributes,
                               allowMultipleAllocations=True)  # fmt: skip
        if selector.program is not None:
            compiled.add(name)
            # the scheduler hands allowMultipleAllocations over only with the gate (the incubating allocator)
            assert result.matches or (not capacity and "multiple" in name)
    assert compiled == compiles


# -- what changed from release to release ---------------------------------------------------------------------------


@pytest.mark.parametrize(("version", "cost"), [("1.31", None), ("1.32", 52), ("1.33", 52), ("1.37", 52)])
def test_cost_estimates_arrive_in_1_32(version: str, cost: int | None) -> None:
    """1.31 made no estimate; 1.32 estimated without the device's sizes, so a traversal was unbounded."""
    assert dra.compile_selector(ALL, version).max_cost == cost
    traversal = 'device.attributes["dra.example.com"].map(s, s.lowerAscii()).map(s, s.size()).sum() == 0'
    if version == "1.32":  # compile_test.go at v0.32.0, "expensive"
        assert dra.compile_selector(traversal, version).max_cost == 18446744073709551615


@pytest.mark.parametrize(("version", "stored", "accepted"), [
    ("1.32", False, False), ("1.33", False, False), ("1.33", True, True), ("1.34", False, True),
])  # fmt: skip
def test_semver_normalization_from_1_34(version: str, stored: bool, accepted: bool) -> None:
    """DRA's semver library v0 until the base environment's v1 (1.33) is rollback-safe (1.34 for new expressions)."""
    compiled = dra.compile_selector('semver("v1.0", true) == semver("1.0.0")', version, stored=stored)
    if accepted:
        assert compiled.error == ""
    else:
        assert "found no matching overload for 'semver' applied to '(string, bool)'" in compiled.error


def test_semver_parsing_cost_before_1_33() -> None:
    """Kubernetes' cost model priced semver() only from 1.33: cel-go's default of 1 applied before."""
    expression = 'semver("1000000000000000000.0.0").isGreaterThan(semver("0.0.1"))'
    assert [dra.compile_selector(expression, v).max_cost for v in ("1.32", "1.33")] == [3, 5]


@pytest.mark.parametrize(("version", "stored", "error"), [
    ("1.35", False, "must evaluate to bool or the unknown type, not dyn"),
    ("1.37", False, "must evaluate to bool or the unknown type, not dyn"),
    ("1.37", True, ""),
])  # fmt: skip
def test_dyn_results_need_dyn_attributes(version: str, stored: bool, error: str) -> None:
    assert dra.compile_selector("dyn(true)", version, stored=stored).error == error
    assert dra.compile_selector(NAME, version, stored=stored).error == ""  # the attribute's own type


def test_macros_do_not_range_over_any_attributes() -> None:
    compiled = dra.compile_selector(f"{NAME}.exists(x, x)", "1.35")
    assert compiled.error == (
        "compilation failed: ERROR: <input>:1:37: expression of type 'any' cannot be range of a comprehension "
        "(must be list, map, or dynamic)\n"
        ' | device.attributes["dra.example.com"].name.exists(x, x)\n'
        " | ....................................^"
    )


def test_missing_domains_are_empty_maps_but_not_in_the_map() -> None:
    expression = '!("x" in device.attributes) && has(device.attributes.x) && device.attributes["x"].size() == 0'
    assert run(expression)[1].matches


def test_environments_and_kinds() -> None:
    env = dra.ENVIRONMENTS["dra-selector"]("1.33")
    assert env.compile('device.driver == "x"').evaluate({"device": {"driver": "x"}}) is True
    assert ("resource.k8s.io", "ResourceClaimTemplate") in dra.KINDS
    with pytest.raises(ValueError, match="Kubernetes 1.30 has no device selectors"):
        dra.ENVIRONMENTS["dra-selector"]("1.30")
    with pytest.raises(ValueError, match="unknown feature gate 'DRAFoo'"):
        dra.selector_env("1.36", feature_gates={"DRAFoo": True})


# -- create-time validation (pkg/apis/resource/validation validateSelector, validateCELSelector) --------------------


def device_class(*expressions: Any, api: str = "v1") -> dict[str, Any]:
    selectors = [e if isinstance(e, dict) else {"cel": {"expression": e}} for e in expressions]
    return {"apiVersion": f"resource.k8s.io/{api}", "kind": "DeviceClass", "metadata": {"name": "gpu"},
            "spec": {"selectors": selectors}}  # fmt: skip


def claim(request: dict[str, Any], api: str = "v1", template: bool = False) -> dict[str, Any]:
    spec = {"devices": {"requests": [{"name": "req", **request}]}}
    kind = "ResourceClaimTemplate" if template else "ResourceClaim"
    return {"apiVersion": f"resource.k8s.io/{api}", "kind": kind, "metadata": {"name": "c", "namespace": "ns"},
            "spec": {"spec": spec} if template else spec}  # fmt: skip


def test_a_valid_device_class() -> None:
    checked = dra.check(device_class('device.driver == "gpu.example.com"', "true"), "test", "1.37")
    assert (checked.kind, checked.name, checked.expressions, checked.valid) == ("DeviceClass", "gpu", 2, True)


@pytest.mark.parametrize(("selector", "error"), [
    ("1", 'spec.selectors[0].cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int'),
    ("?!", 'spec.selectors[0].cel.expression: Invalid value: "?!": compilation failed: ERROR: <input>:1:1: Syntax '
           "error: extraneous input '?' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
           "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | ?!\n | ^\nERROR: <input>:1:3: Syntax error: extraneous "
           "input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, "
           "NUM_UINT, STRING, BYTES, IDENTIFIER}\n | ?!\n | ..^"),  # cel-go v0.29.2's two errors
    ("device.nope", 'spec.selectors[0].cel.expression: Invalid value: "device.nope": compilation failed: ERROR: '
                    "<input>:1:7: undefined field 'nope'\n | device.nope\n | ......^"),
    ({}, "spec.selectors[0].cel: Required value"),
    ({"cel": None}, "spec.selectors[0].cel: Required value"),
    (NESTED, "spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"),
    ("true || " * 1300 + "true", "spec.selectors[0].cel.expression: Too long: may not be more than 10240 bytes"),
    ({"cel": {"expression": 5}}, "spec.selectors[0].cel.expression: Invalid value: expected a string, not a number"),
    ("x", "spec.selectors[0].cel.expression: Invalid value: \"x\": compilation failed: ERROR: <input>:1:1: "
          "undeclared reference to 'x' (in container '')\n | x\n | ^"),
])  # fmt: skip
def test_selector_errors(selector: Any, error: str) -> None:
    assert dra.check(device_class(selector), "test", "1.37").errors == (error,)


def test_at_most_32_selectors_and_nothing_else_is_checked() -> None:
    checked = dra.check(device_class(*["1"] * 33), "test", "1.37")
    assert checked.errors == ("spec.selectors: Too many: 33: must have at most 32 items",)
    one_too_many = device_class(*["1"] * 2, api="v1beta2")
    assert dra.check(
        one_too_many, "test", "1.33", runtime_config=ON
    ).errors == (  # each selector is checked below the limit
        'spec.selectors[0].cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int',
        'spec.selectors[1].cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int',
    )


def test_1_31_checks_neither_length_nor_cost() -> None:
    document = device_class(NESTED, "true || " * 1300 + "true", api="v1alpha3")
    assert dra.check(document, "test", "1.31", runtime_config=ON).errors == ()
    document["apiVersion"] = "resource.k8s.io/v1beta1"
    assert len(dra.check(document, "test", "1.32", runtime_config=ON).errors) == 2


@pytest.mark.parametrize(("document", "version", "path"), [
    (claim({"deviceClassName": "gpu", "selectors": [{"cel": {"expression": "1"}}]}, "v1alpha3"), "1.31",
     "spec.devices.requests[0].selectors[0]"),
    (claim({"deviceClassName": "gpu", "selectors": [{"cel": {"expression": "1"}}]}, "v1beta1"), "1.32",
     "spec.devices.requests[0].selectors[0]"),
    (claim({"deviceClassName": "gpu", "selectors": [{"cel": {"expression": "1"}}]}, "v1beta1"), "1.33",
     "spec.devices.requests[0].exactly.selectors[0]"),
    (claim({"exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": "1"}}]}}), "1.34",
     "spec.devices.requests[0].exactly.selectors[0]"),
    (claim({"exactly": {"selectors": [{"cel": {"expression": "1"}}]}}, "v1beta2", True), "1.33",
     "spec.spec.devices.requests[0].exactly.selectors[0]"),
    (claim({"firstAvailable": [{"name": "a"}, {"name": "b", "selectors": [{"cel": {"expression": "1"}}]}]}), "1.34",
     "spec.devices.requests[0].firstAvailable[1].selectors[0]"),
])  # fmt: skip
def test_request_selectors_are_reported_at_the_internal_types_paths(
    document: dict[str, Any], version: str, path: str
) -> None:
    error = f'{path}.cel.expression: Invalid value: "1": must evaluate to bool or the unknown type, not int'
    assert dra.check(document, "test", version, runtime_config=ON).errors == (error,)


def test_first_available_before_it_is_on() -> None:
    document = claim({"deviceClassName": "gpu", "firstAvailable": [{"selectors": [{"cel": {"expression": "1"}}]}]},
                     "v1beta1")  # fmt: skip
    warnings = dra.check(document, "test", "1.32", runtime_config=ON).warnings
    assert warnings == ('unknown field "spec.devices.requests[0].firstAvailable"',)
    checked = dra.check(document, "test", "1.33", runtime_config=ON)
    assert checked.errors == () and "DRAPrioritizedList feature gate is off" in checked.warnings[0]
    gated = dra.check(document, "test", "1.33", feature_gates={"DRAPrioritizedList": True}, runtime_config=ON)
    assert gated.errors[0].startswith("spec.devices.requests[0].firstAvailable[0].selectors[0].cel.expression: ")


@pytest.mark.parametrize(("version", "api"), [("1.30", "v1alpha3"), ("1.31", "v1beta1"), ("1.33", "v1alpha3"),
                                              ("1.33", "v1"), ("1.37", "v2")])  # fmt: skip
def test_api_versions_the_server_does_not_serve(version: str, api: str) -> None:
    checked = dra.check(device_class("true", api=api), "test", version)
    assert checked.errors == (f'no matches for kind "DeviceClass" in version "resource.k8s.io/{api}"',)


@pytest.mark.parametrize(("document", "error"), [
    ("text", "f.yaml: document 0: not a Kubernetes object"),
    ({"apiVersion": "apps/v1", "kind": "Deployment"}, "f.yaml: document 0: Deployment of apps has no selectors"),
    ({**device_class(), "spec": "x"}, "spec: Invalid value: expected an object, not a string"),
    ({**device_class(), "spec": {"selectors": {"cel": {}}}}, "spec.selectors: Invalid value: expected a list, not an "
                                                             "object"),
    (claim({"exactly": []}), "spec.devices.requests[0].exactly: Invalid value: expected an object, not a list"),
    ({**claim({}), "spec": {"devices": {"requests": [7]}}},
     "spec.devices.requests[0]: Invalid value: expected an object, not a number"),
])  # fmt: skip
def test_malformed_documents_name_the_field(document: Any, error: str) -> None:
    assert dra.check(document, "f.yaml: document 0", "1.37").errors == (error,)


# -- the scheduler: selectorsMatch, DeviceMatches ------------------------------------------------------------------


def resource_slice(*devices: dict[str, Any], driver: str = "gpu.example.com") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "spec": {"driver": driver, "pool": {"name": "node-1"}, "devices": list(devices)}}  # fmt: skip


GPUS = resource_slice(
    {"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "numa.example.com/node": {"int": 0}},
     "capacity": {"memory": {"value": "40Gi"}}},
    {"name": "gpu-1", "attributes": {"model": {"string": "t4"}}, "capacity": {"memory": {"value": "16Gi"}}},
)  # fmt: skip
GPU_CLASS = device_class('device.driver == "gpu.example.com"')


def select(expression: str, version: str = "1.37", *slices: dict[str, Any], **gates: bool) -> dra.Selection:
    document = claim({"exactly": {"deviceClassName": "gpu", "selectors": [{"cel": {"expression": expression}}]}})
    return dra.select_devices(document, slices or (GPUS,), [GPU_CLASS], version, feature_gates=gates)


def test_devices_are_selected_by_the_class_and_the_request() -> None:
    selection = select('device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) >= 0')
    (request,) = selection.requests
    assert (selection.claim, request.request, request.device_class) == ("ns/c", "req", "gpu")
    assert request.selected == ("gpu.example.com/node-1/gpu-0",)
    assert (selection.failure, selection.errors) == ("", ())


def test_unqualified_names_are_in_the_drivers_domain() -> None:
    expression = (
        'device.attributes["gpu.example.com"].model == "a100" && device.attributes["numa.example.com"].node < 1'
    )
    assert select(expression).requests[0].selected == ("gpu.example.com/node-1/gpu-0",)


@pytest.mark.parametrize(("version", "error"), [
    ("1.36", "claim ns/c: selector #0: CEL runtime error: no such key: ecc"),
    ("1.37", f"claim ns/c: selector #0 on device gpu.example.com/node-1/gpu-0: CEL runtime error: no such key: ecc"
             f"{NO_SUCH_KEY_HINT}"),
])  # fmt: skip
def test_an_error_on_a_device_fails_the_allocation(version: str, error: str) -> None:
    selection = select('device.attributes["gpu.example.com"].ecc', version)
    assert selection.requests[0].devices[0] == dra.DeviceResult("gpu.example.com/node-1/gpu-0", False, error, 4 + 4)
    assert selection.failure == error


def test_the_class_decides_first() -> None:
    other = resource_slice({"name": "x", "attributes": {}}, driver="nic.example.com")
    (result,) = select('device.attributes["gpu.example.com"].ecc', "1.37", other).requests[0].devices
    assert (result.matches, result.error) == (False, "")  # the class's selector already rejected it


def test_scheduler_errors() -> None:
    assert select("device.attributes['gpu.example.com'].model", "1.35").requests[0].devices[0].error == (
        "claim ns/c: selector #0: CEL runtime error: CEL result of type string could not be converted to bool: "
        "unsupported native conversion from string to 'bool'"
    )
    broken = {"name": "bad", "attributes": {"version": {"version": "1.0"}}}
    assert select("true", "1.36", resource_slice(broken)).failure == (
        "class gpu: selector #0: CEL runtime error: attribute version: parse semantic version: No Major.Minor.Patch "
        "elements found"
    )
    missing = claim({"exactly": {"deviceClassName": "fpga"}})
    assert dra.select_devices(missing, [GPUS], [GPU_CLASS]).failure == (
        'claim ns/c, request req: could not retrieve device class fpga: deviceclass.resource.k8s.io "fpga" not found'
    )
    empty = claim({"exactly": {"deviceClassName": "gpu", "selectors": [{}]}})
    assert dra.select_devices(empty, [GPUS], [GPU_CLASS]).failure == (
        "claim ns/c, request req, selector #0: CEL expression empty (unsupported selector type?)"
    )
    assert select("device.nope").failure.startswith(
        "claim ns/c: selector #0: CEL compile error: compilation failed: ERROR: <input>:1:7: undefined field 'nope'"
    )


def test_list_attributes_need_the_gate_in_1_36() -> None:
    lists = resource_slice({"name": "n", "attributes": {"ids": {"ints": [1, 2]}}})
    assert select(f"{NAMES}.size() > 0", "1.36", lists).failure.endswith("attribute ids: unsupported attribute value")
    expression = 'device.attributes["gpu.example.com"].ids.exists(i, i == 2)'
    selection = select(expression, "1.36", lists, DRAListTypeAttributes=True)
    assert selection.requests[0].selected == ("gpu.example.com/node-1/n",)


@pytest.mark.parametrize(("version", "selected"), [("1.35", ()), ("1.36", ("gpu.example.com/node-1/shared",))])
def test_allow_multiple_allocations_reaches_the_selector_with_consumable_capacity(
    version: str, selected: tuple[str, ...]
) -> None:
    shared = resource_slice({"name": "shared", "allowMultipleAllocations": True})
    assert select("device.allowMultipleAllocations", version, shared).requests[0].selected == selected


def test_older_device_shapes() -> None:
    basic = {"name": "old", "basic": {"attributes": {"model": {"string": "a100"}}, "capacity": {"memory": "40Gi"}}}
    expression = 'device.capacity["gpu.example.com"].memory == quantity("40Gi") && device.driver == "gpu.example.com"'
    assert select(expression, "1.31", resource_slice(basic)).requests[0].selected == ("gpu.example.com/node-1/old",)


def test_malformed_devices_are_reported_not_raised() -> None:
    bad = resource_slice({"name": "b", "attributes": {"n": {"int": "seven"}}}, {"name": "c", "capacity": {"m": "x"}})
    assert select("true", "1.37", bad).errors == (
        "slices[0].spec.devices[0].attributes[n].int: Invalid value: expected int values",
        'slices[0].spec.devices[1].capacity[m]: Invalid value: "x": quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    )
    with pytest.raises(ValueError, match=r"device.attributes: Invalid value: expected an object, not a list"):
        dra.device_value({"attributes": []}, "d")


GATE = " --feature-gates=DynamicResourceAllocation=true"


@pytest.mark.parametrize(("version", "api", "switches"), [
    ("1.33", "v1beta2", "--runtime-config=resource.k8s.io/v1beta2=true" + GATE),
    ("1.31", "v1alpha3", "--runtime-config=resource.k8s.io/v1alpha3=true" + GATE),
    ("1.37", "v1beta1", "--runtime-config=resource.k8s.io/v1beta1=true"),  # GA since 1.34: no gate
])  # fmt: skip
def test_beta_and_alpha_versions_are_served_only_when_switched_on(version: str, api: str, switches: str) -> None:
    """No beta or alpha API is on by default (DefaultAPIResourceConfigSource), and DRA needed its gate before 1.34:
    refused, naming both; checked when assumed on."""
    document = device_class("true", api=api)
    (error,) = dra.check(document, "f.yaml: document 0", version).errors
    assert error == (
        f"f.yaml: document 0: resource.k8s.io/{api} DeviceClass is served by Kubernetes {version} only when switched "
        f"on (kube-apiserver {switches}); --runtime-config resource.k8s.io/{api} (runtime_config= in the API) "
        "assumes it is"
    )
    assert dra.check(document, "test", version, runtime_config=[f"resource.k8s.io/{api}"]).errors == ()
    assert dra.check(device_class("true"), "test", "1.37").errors == ()  # v1: on by default
