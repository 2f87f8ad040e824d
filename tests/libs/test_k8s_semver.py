"""Table tests of Kubernetes' semver library (apiserver pkg/cel/library/semverlib.go) and blang/semver/v4 parsing.

Parsing and ordering rows follow blang's semver_test.go (wrongformatTests, compareTests,
formatTests); error texts are blang's, which Kubernetes reports unchanged. The last tests run
every case of Kubernetes' semver_test.go and the semver cases of cost_test.go from
../shared/k8s-cases.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import kcel
from kcel.checker.types import INT, STRING
from kcel.errors import CompileError, EvalError
from kcel.eval.dispatch import predicate
from kcel.eval.runtime import type_of
from kcel.libs import SizedCall, SizeEstimate
from kcel.libs.k8s_semver import (
    LIBRARY,
    SEMVER_TYPE,
    PreRelease,
    Semver,
    SemverError,
    library,
    normalize_and_parse,
    parse,
)
from kcel.values import TypeValue
from tests.conftest import SHARED

OVERLOADS = {o.id: o for o in LIBRARY.overloads}


def env(version: int = 1, variables: dict[str, str] | None = None) -> kcel.Env:
    return kcel.Env(variables=variables, libraries=[*kcel.env.cel_libraries(), library(version)])


def evaluate(expr: str, version: int = 1, **variables: Any) -> Any:
    declared = {name: "dyn" for name in variables}
    return env(version, declared).compile(expr).evaluate(variables)


# -- blang Parse -------------------------------------------------------------------------------

# (text, String() of the parsed version)
VALID_ROWS = [
    ("1.2.3", "1.2.3"),
    ("0.0.1", "0.0.1"),
    ("0.0.0", "0.0.0"),
    ("0.0.1-alpha.preview+123.456", "0.0.1-alpha.preview+123.456"),
    ("1.2.3-alpha.1+123.456", "1.2.3-alpha.1+123.456"),
    ("1.2.3-alpha.1", "1.2.3-alpha.1"),
    ("1.2.3+123.456", "1.2.3+123.456"),
    ("1.2.3-alpha.b-eta+123.b-uild", "1.2.3-alpha.b-eta+123.b-uild"),
    ("1.2.3+123.b-uild", "1.2.3+123.b-uild"),
    ("1.2.3-alpha.b-eta", "1.2.3-alpha.b-eta"),
    ("1.2.3-0", "1.2.3-0"),
    ("1.2.3-0a", "1.2.3-0a"),  # leading zeros are only forbidden in numeric identifiers
    ("1.2.3+0001", "1.2.3+0001"),  # ... and build metadata has no numeric identifiers
    ("1.2.3-x-y-z.--", "1.2.3-x-y-z.--"),
    ("18446744073709551615.0.0", "18446744073709551615.0.0"),  # uint64 max
    ("1.2.3-18446744073709551615", "1.2.3-18446744073709551615"),
]

# (text, blang's error)
INVALID_ROWS = [
    ("", "Version string empty"),
    (".", "No Major.Minor.Patch elements found"),
    ("1.", "No Major.Minor.Patch elements found"),
    (".1", "No Major.Minor.Patch elements found"),
    ("1", "No Major.Minor.Patch elements found"),
    ("1.1", "No Major.Minor.Patch elements found"),
    ("v1.0", "No Major.Minor.Patch elements found"),
    ("v1.0.0", 'Invalid character(s) found in major number "v1"'),
    ("a.b.c", 'Invalid character(s) found in major number "a"'),
    ("1.a.b", 'Invalid character(s) found in minor number "a"'),
    ("1.1.a", 'Invalid character(s) found in patch number "a"'),
    ("1.a.1", 'Invalid character(s) found in minor number "a"'),
    ("a.1.1", 'Invalid character(s) found in major number "a"'),
    ("..", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1..", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.1.", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1..1", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.1.+123", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("1.1.-beta", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("-1.1.1", 'Invalid character(s) found in major number "-1"'),
    ("1.-1.1", 'Invalid character(s) found in minor number "-1"'),
    ("1.1.-1", 'strconv.ParseUint: parsing "": invalid syntax'),
    ("20000000000000000000.1.1", 'strconv.ParseUint: parsing "20000000000000000000": value out of range'),
    ("1.20000000000000000000.1", 'strconv.ParseUint: parsing "20000000000000000000": value out of range'),
    ("1.1.20000000000000000000", 'strconv.ParseUint: parsing "20000000000000000000": value out of range'),
    ("1.1.1-20000000000000000000", 'strconv.ParseUint: parsing "20000000000000000000": value out of range'),
    ("01.1.1", 'Major number must not contain leading zeroes "01"'),
    ("001.1.1", 'Major number must not contain leading zeroes "001"'),
    ("1.01.1", 'Minor number must not contain leading zeroes "01"'),
    ("1.001.1", 'Minor number must not contain leading zeroes "001"'),
    ("1.1.01", 'Patch number must not contain leading zeroes "01"'),
    ("1.1.001", 'Patch number must not contain leading zeroes "001"'),
    ("1.1.1-", "Prerelease is empty"),
    ("1.1.1-.alpha", "Prerelease is empty"),
    ("1.1.1-alpha..1", "Prerelease is empty"),
    ("1.1.1-001", 'Numeric PreRelease version must not contain leading zeroes "001"'),
    ("1.1.1-alpha_1", 'Invalid character(s) found in prerelease "alpha_1"'),
    ("1.1.1-alpha+", "Build meta data is empty"),
    ("1.1.1+", "Build meta data is empty"),
    ("1.1.1+a..b", "Build meta data is empty"),
    ("1.1.1+a_b", 'Invalid character(s) found in build meta data "a_b"'),
    ("1.2.3+x-y+z", 'Invalid character(s) found in build meta data "x-y+z"'),  # only the first `+` counts
    ("1.0.0 ", 'Invalid character(s) found in patch number "0 "'),
    (" 1.0.0", 'Invalid character(s) found in major number " 1"'),
    ("1. 0.0", 'Invalid character(s) found in minor number " 0"'),
    ("1.0.0-é", 'Invalid character(s) found in prerelease "é"'),
    ("1.0.0-\x01", 'Invalid character(s) found in prerelease "\\x01"'),
]


@pytest.mark.parametrize(("text", "printed"), VALID_ROWS)
def test_parse(text: str, printed: str) -> None:
    assert str(parse(text)) == printed


@pytest.mark.parametrize(("text", "message"), INVALID_ROWS)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SemverError) as info:
        parse(text)
    assert str(info.value) == message


def test_parse_fields() -> None:
    version = parse("1.22.333-alpha.7+build.5")
    assert (version.major, version.minor, version.patch) == (1, 22, 333)
    assert version.pre == (PreRelease("alpha", 0, False), PreRelease("", 7, True))
    assert version.build == ("build", "5")


# -- normalizeAndParse -------------------------------------------------------------------------

# (text, the version it normalizes to, or the error)
NORMALIZE_ROWS = [
    ("v1.2.3", "1.2.3"),
    ("1.2.0-alpha", "1.2.0-alpha"),
    ("1.2.00", "1.2.0"),
    ("01.02.03", "1.2.3"),
    ("00.0.03", "0.0.3"),
    ("000.0.03", "0.0.3"),
    ("1.2", "1.2.0"),
    ("1", "1.0.0"),
    ("v01.01", "1.1.0"),
    ("v1", "1.0.0"),
    ("1.0.0-beta+exp.sha.5114f85", "1.0.0-beta+exp.sha.5114f85"),
    ("1.0.00-beta", "1.0.0-beta"),  # zeros go, then a 0 comes back: "-beta" does not start with a digit
    ("1.0.0a", SemverError('Invalid character(s) found in patch number "0a"')),
    ("1.0.-1", "1.0.0-1"),  # "-1" is long, starts with no digit, and gets a 0: the patch is 0-1
    ("1.0.-beta", "1.0.0-beta"),
    ("vv1.0.0", SemverError('Invalid character(s) found in major number "0v1"')),  # only one `v` goes
    ("V1.0.0", SemverError('Invalid character(s) found in major number "0V1"')),
    ("", SemverError('strconv.ParseUint: parsing "": invalid syntax')),  # padded to ".0.0"
    ("v", SemverError('strconv.ParseUint: parsing "": invalid syntax')),
    ("1.2-beta", SemverError("short version cannot contain PreRelease/Build meta data")),
    ("1+build", SemverError("short version cannot contain PreRelease/Build meta data")),
    (" 1.0.0", SemverError('Invalid character(s) found in major number "0 1"')),  # no whitespace trimming
    ("1.0.0 ", SemverError('Invalid character(s) found in patch number "0 "')),
    ("1. 0.0", SemverError('Invalid character(s) found in minor number "0 0"')),
    ("é", SemverError('Invalid character(s) found in major number "0é"')),  # two bytes: a long part
    ("1.2.3.4", SemverError('Invalid character(s) found in patch number "3.4"')),
]


@pytest.mark.parametrize(("text", "want"), NORMALIZE_ROWS)
def test_normalize_and_parse(text: str, want: str | SemverError) -> None:
    if isinstance(want, SemverError):
        with pytest.raises(SemverError) as info:
            normalize_and_parse(text)
        assert str(info.value) == str(want)
    else:
        assert str(normalize_and_parse(text)) == want


# -- ordering and equality ---------------------------------------------------------------------

# (lower, higher): semver.org §11 precedence, and blang's compareTests
ORDERED_ROWS = [
    ("1.0.0", "2.0.0"),
    ("2.0.0", "2.1.0"),
    ("2.1.0", "2.1.1"),
    ("1.2.3", "1.2.4"),
    ("1.2.3", "1.3.3"),
    ("1.2.4", "2.2.4"),
    ("1.0.0-alpha", "1.0.0"),
    ("1.0.0-alpha", "1.0.0-alpha.1"),
    ("1.0.0-alpha.1", "1.0.0-alpha.beta"),
    ("1.0.0-alpha.beta", "1.0.0-beta"),
    ("1.0.0-beta", "1.0.0-beta.2"),
    ("1.0.0-beta.2", "1.0.0-beta.11"),  # numeric identifiers compare as numbers
    ("1.0.0-beta.11", "1.0.0-rc.1"),
    ("1.0.0-rc.1", "1.0.0"),
    ("1.0.0-1", "1.0.0-a"),  # numeric before alphanumeric
    ("1.0.0-A", "1.0.0-a"),  # ASCII order
    ("1.0.0-9", "1.0.0-10"),
    ("9.0.0", "10.0.0"),
    ("9223372036854775807.0.0", "9223372036854775808.0.0"),  # uint64, not int64
]


@pytest.mark.parametrize(("lower", "higher"), ORDERED_ROWS)
def test_compare(lower: str, higher: str) -> None:
    low, high = parse(lower), parse(higher)
    assert (low.compare(high), high.compare(low), low.compare(low)) == (-1, 1, 0)
    assert low != high


@pytest.mark.parametrize(("a", "b"), [("1.0.0+1.2.3", "1.0.0"), ("1.0.0-rc.1+a", "1.0.0-rc.1+b")])
def test_build_metadata_is_ignored_by_equality(a: str, b: str) -> None:
    assert parse(a) == parse(b)
    assert hash(parse(a)) == hash(parse(b))
    assert parse(a).compare(parse(b)) == 0


def test_no_python_ordering() -> None:
    """Kubernetes orders versions only through functions, so `<` stays unsupported."""
    with pytest.raises(TypeError):
        _ = parse("1.0.0") < parse("2.0.0")  # type: ignore[operator]


# -- CEL expressions ---------------------------------------------------------------------------

EXPRESSION_ROWS: list[tuple[str, Any]] = [
    ("semver('1.2.3') == semver('1.2.3')", True),
    ("semver('1.2.3') != semver('1.2.4')", True),
    ("semver('1.2.3+a') == semver('1.2.3+b')", True),
    ("semver('1.2.3-rc.1') == semver('1.2.3')", False),
    ("semver('1.2.3').major()", 1),
    ("semver('1.2.3').minor()", 2),
    ("semver('1.2.3').patch()", 3),
    ("semver('18446744073709551615.9223372036854775808.9223372036854775807').major()", -1),  # Go's int64(uint64)
    ("semver('18446744073709551615.9223372036854775808.9223372036854775807').minor()", -(2**63)),
    ("semver('18446744073709551615.9223372036854775808.9223372036854775807').patch()", 2**63 - 1),
    ("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", True),
    ("semver('1.0.0').isGreaterThan(semver('1.0.0-alpha'))", True),
    ("semver('1.0.0').isGreaterThan(semver('1.0.0+build'))", False),
    ("semver('1.0.0-beta.11').compareTo(semver('1.0.0-beta.2'))", 1),
    ("semver('1.0.0-beta.2').compareTo(semver('1.0.0-beta.11'))", -1),
    ("semver('1.0.0+x').compareTo(semver('1.0.0+y'))", 0),
    ("semver('v1', true) == semver('1.0.0')", True),
    ("semver('1.2.3', false) == semver('1.2.3')", True),
    ("semver('01.02.03', true).patch()", 3),
    ("isSemver('1.0.0')", True),
    ("isSemver('1.0.0-rc.1+build.1')", True),
    ("isSemver('v1.0.0')", False),
    ("isSemver('v1.0.0', true)", True),
    ("isSemver('v1.0.0', false)", False),
    ("isSemver('1.2-beta', true)", False),
    ("isSemver('hello')", False),
    ("type(semver('1.0.0')) == kubernetes.Semver", True),
    ("[semver('1.0.0'), semver('2.0.0')].exists(v, v.isGreaterThan(semver('1.5.0')))", True),
    ("semver('1.0.0') in [semver('1.0.0+build')]", True),
    ("semver('1.0.0')", Semver(1, 0, 0)),
    ("semver('1.0.0-a.1+b', true)", parse("1.0.0-a.1+b")),
]


@pytest.mark.parametrize(("expr", "want"), EXPRESSION_ROWS)
def test_expressions(expr: str, want: Any) -> None:
    got = evaluate(expr)
    assert got == want and type(got) is type(want)


# (expression, the exact evaluation error)
ERROR_ROWS = [
    ("semver('v1.0')", "No Major.Minor.Patch elements found"),
    ("semver('')", "Version string empty"),
    ("semver('1.2-beta', true)", "short version cannot contain PreRelease/Build meta data"),
    ("semver('01.0.0')", 'Major number must not contain leading zeroes "01"'),
    ("semver('1.0.0-01')", 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("semver('200K')", "No Major.Minor.Patch elements found"),
    ("semver(x)", "No Major.Minor.Patch elements found"),
    ("semver('1.0.0') == x", "no such overload"),  # Kubernetes' Semver.Equal with another type
]


@pytest.mark.parametrize(("expr", "message"), ERROR_ROWS)
def test_evaluation_errors(expr: str, message: str) -> None:
    with pytest.raises(EvalError) as info:
        evaluate(expr, x="1.0")
    assert str(info.value) == message


def test_other_values_equal_to_semver_is_false() -> None:
    """Only the Semver side reports an error; Int.Equal and String.Equal just say false."""
    assert evaluate("x == semver('1.0.0')", x="1.0.0") is False


@pytest.mark.parametrize(
    "expr",
    [
        "semver('1.0.0', true)",  # the normalize overloads are version 1
        "isSemver('1.0.0', true)",
        "isSemver([1, 2, 3])",
        "semver('1.0.0') < semver('2.0.0')",  # no ordering operators
        "semver('1.0.0').major(1)",
        "major(semver('1.0.0'))",  # member functions only
    ],
)
def test_version_0_compile_errors(expr: str) -> None:
    with pytest.raises(CompileError, match="found no matching overload|undeclared reference"):
        env(0).compile(expr)


def test_library_versions() -> None:
    assert [o.id for o in library(0).overloads] == [
        "string_to_semver", "is_semver_string", "semver_is_greater_than", "semver_is_less_than",
        "semver_compare_to", "semver_major", "semver_minor", "semver_patch",
    ]  # fmt: skip
    assert set(OVERLOADS) == {o.id for o in library(0).overloads} | {"string_bool_to_semver", "is_semver_string_bool"}
    assert library(7) == LIBRARY  # any later version declares the same functions
    with pytest.raises(ValueError, match="negative"):
        library(-1)


def test_overload_signatures() -> None:
    assert OVERLOADS["string_bool_to_semver"].args == (STRING, kcel.checker.types.BOOL)
    assert OVERLOADS["semver_compare_to"].result == INT and OVERLOADS["semver_compare_to"].member
    assert not OVERLOADS["is_semver_string"].member
    assert LIBRARY.types == (SEMVER_TYPE,)


def test_runtime_type_registration() -> None:
    assert type_of(parse("1.0.0")) == TypeValue("kubernetes.Semver")
    assert predicate(SEMVER_TYPE)(parse("1.0.0"))
    assert not predicate(SEMVER_TYPE)("1.0.0")


# -- costs (k8s-cel-cost.md §2.4 runtime, §3.3 estimate) ---------------------------------------

# (expression, runtime cost)
COST_ROWS = [
    ("semver('1.0.0')", 1),
    ("semver('1234.56789012345.67890123456789')", 4),  # ceil(31 × 0.1)
    ("semver('v1.2.3456789', true)", 2),
    ("isSemver('1.0.0')", 1),
    ("isSemver('1.0.0-' + 'rc.1234')", 4),  # `+` costs ceil(13 × 0.1) = 2 and so does the call
    ("semver('1.2.3').major()", 2),
    ("semver('1.0.0').isLessThan(semver('1.1.0'))", 3),
    ("semver('1.0.0') == semver('1.0.0')", 3),  # Kubernetes charges 1 for Semver equality
]


@pytest.mark.parametrize(("expr", "cost"), COST_ROWS)
def test_runtime_costs(expr: str, cost: int) -> None:
    assert env().compile(expr).evaluate_with_cost({})[1] == cost


@pytest.mark.parametrize(
    ("overload_id", "sizes", "expected"),
    [
        ("string_to_semver", [SizeEstimate(5, 5)], (1, 1)),
        ("string_to_semver", [SizeEstimate(31, 31)], (4, 4)),
        ("string_bool_to_semver", [SizeEstimate(0, 12), SizeEstimate(1, 1)], (0, 2)),
        ("is_semver_string", [SizeEstimate(0, 2**64 - 1)], (0, 1844674407370955264)),  # float64, as in Go
        ("is_semver_string_bool", [SizeEstimate(10, 11), SizeEstimate(1, 1)], (1, 2)),
        ("semver_major", [SizeEstimate(1, 1)], (1, 1)),
        ("semver_compare_to", [SizeEstimate(1, 1), SizeEstimate(1, 1)], (1, 1)),
    ],
)
def test_estimated_costs(overload_id: str, sizes: list[SizeEstimate], expected: tuple[int, int]) -> None:
    estimate = OVERLOADS[overload_id].estimate
    assert estimate is not None
    got = estimate(SizedCall(sizes))
    assert got is not None and (got.cost.min, got.cost.max) == expected


# -- Kubernetes' own tables (../shared/k8s-cases) ----------------------------------------------

CASES_DIR = SHARED / "k8s-cases"
if not CASES_DIR.is_dir():
    pytest.skip(f"k8s-cases not found at {CASES_DIR} (../shared is absent)", allow_module_level=True)


def _cases(file: str, keep: Any = lambda case: True) -> list[Any]:
    document = json.loads((CASES_DIR / file).read_text(encoding="utf-8"))
    return [pytest.param(case, id=case["id"]) for case in document["cases"] if keep(case)]


def _decode(value: Any) -> Any:
    """The README's value encoding, for the kinds these tables use."""
    if isinstance(value, dict) and "int" in value:
        return int(value["int"])
    if isinstance(value, dict) and "semver" in value:
        return parse(value["semver"])
    return value


@pytest.mark.parametrize("case", _cases("apiserver-library-semver_test.json"))
def test_k8s_semver_cases(case: dict[str, Any]) -> None:
    assert case["kind"] == "eval"
    expect = case["expect"]
    compiled = env(case["env"]["semver_library_version"])
    if "compile_error" in expect:
        with pytest.raises(CompileError) as info:
            compiled.compile(case["expression"])
        issues = [line for line in str(info.value).splitlines() if line.startswith("ERROR:")]
        for pattern in expect["compile_error"]["patterns"]:
            assert any(re.search(pattern, issue) for issue in issues), (pattern, issues)
        assert all(any(re.search(p, i) for p in expect["compile_error"]["patterns"]) for i in issues)
        return
    program = compiled.compile(case["expression"])
    variables = {k: _decode(v) for k, v in case["inputs"]["variables"].items()}
    if "runtime_error" in expect:
        with pytest.raises(EvalError) as error:
            program.evaluate(variables)
        spec = expect["runtime_error"]
        message = str(error.value)
        assert message == spec["pattern"] if spec["match"] == "exact" else re.search(spec["pattern"], message)
        return
    got, want = program.evaluate(variables), _decode(expect["value"])
    assert got == want and type(got) is type(want)


def _semver_cost_case(case: dict[str, Any]) -> bool:
    return "/TestSemverCost/" in case["id"]


@pytest.mark.parametrize("case", _cases("apiserver-library-cost_test.json", _semver_cost_case))
def test_k8s_semver_cost_cases(case: dict[str, Any]) -> None:
    """The runtime costs; the estimates need the static estimator (kcel/cost.py), checked separately above."""
    assert case["kind"] == "cost"
    _, cost = env().compile(case["expression"]).evaluate_with_cost({})
    assert cost == case["expect"]["runtime_cost"]
