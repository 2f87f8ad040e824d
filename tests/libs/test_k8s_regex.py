"""Table tests of Kubernetes' regex library (apiserver pkg/cel/library/regex.go) with Go's regexp semantics.

find/findAll rows follow Go's FindString/FindAllString (regexp.go `allMatches`); error rows are
Go's regexp/syntax messages. The last tests run the regex cases of Kubernetes' cost_test.go from
../shared/k8s-cases.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import kcel
from kcel.cost import StringSizes
from kcel.errors import CompileError, EvalError, PlanError
from kcel.goregex import GoRegexError, compile_go_regex
from kcel.libs import CallEstimate, CostEstimate, SizedCall, SizeEstimate
from kcel.libs.k8s_regex import LIBRARY, find, find_all
from kcel.values import UINT64_MAX
from tests.conftest import SHARED

OVERLOADS = {o.id: o for o in LIBRARY.overloads}


def env(**variables: str) -> kcel.Env:
    return kcel.Env(variables=variables, libraries=[*kcel.env.cel_libraries(), LIBRARY])


def evaluate(expr: str, **values: Any) -> Any:
    return env(**{name: "dyn" for name in values}).compile(expr).evaluate(values)


# -- Go's regexp.Compile errors ----------------------------------------------------------------

# (pattern, Go's error)
COMPILE_ERROR_ROWS = [
    ("(", "missing closing ): `(`"),
    ("a(b", "missing closing ): `a(b`"),
    ("a)", "unexpected ): `a)`"),
    ("[a", "missing closing ]: `[a`"),
    ("a**", "invalid nested repetition operator: `**`"),
    ("*a", "missing argument to repetition operator: `*`"),
    ("a|*", "missing argument to repetition operator: `*`"),
    ("a{1001}", "invalid repeat count: `{1001}`"),
    ("a{2,1}", "invalid repeat count: `{2,1}`"),
    ("[z-a]", "invalid character class range: `z-a`"),
    ("[[:foo:]]", "invalid character class range: `[:foo:]`"),
    ("\\pX", "invalid character class range: `\\pX`"),
    ("\\8", "invalid escape sequence: `\\8`"),
    ("x\\C", "invalid escape sequence: `\\C`"),  # RE2 knows \C (any byte); Go does not
    ("a\\", "trailing backslash at end of expression: ``"),
    ("(?z)", "invalid or unsupported Perl syntax: `(?z`"),
    ("(?i", "invalid or unsupported Perl syntax: `(?i`"),
    ("(?P<n!>a)", "invalid named capture: `(?P<n!>`"),
]


@pytest.mark.parametrize(("pattern", "message"), COMPILE_ERROR_ROWS)
def test_go_compile_errors(pattern: str, message: str) -> None:
    with pytest.raises(GoRegexError) as error:
        compile_go_regex(pattern)
    assert str(error.value) == "error parsing regexp: " + message


@pytest.mark.parametrize("pattern", ["\\Q\\C\\E", "\\\\C", "(?P<name>a)", "(?<name>a)", "\\pN", "[[:word:]]", "a{,5}"])
def test_go_accepts(pattern: str) -> None:
    compile_go_regex(pattern)


# -- find and findAll --------------------------------------------------------------------------

# (text, pattern, Go's FindString)
FIND_ROWS = [
    ("abc 123", "[0-9]+", "123"),
    ("abc 123", "[0-9]*", ""),  # the leftmost match is the empty one at 0 (regex.go's doc says otherwise)
    ("abc 123", "xyz", ""),
    ("héllo wörld", "ö.", "ör"),
    ("abcd", "a|ab", "a"),  # leftmost-first, not leftmost-longest
    ("abcd", "(?U)a.+", "ab"),
    ("abc", "^b", ""),
    ("abc\ndef", "(?m)^d.*", "def"),
    ("abc\ndef", "c$", ""),  # `$` is the end of the text only
    ("ABC", "(?i)b", "B"),
]


@pytest.mark.parametrize(("text", "pattern", "expected"), FIND_ROWS)
def test_find(text: str, pattern: str, expected: str) -> None:
    assert find(text, pattern) == expected
    assert evaluate("s.find(p)", s=text, p=pattern) == expected


# (text, pattern, limit, Go's FindAllString)
FIND_ALL_ROWS = [
    ("123 abc 456", "[0-9]+", -1, ["123", "456"]),
    ("123 abc 456", "[0-9]+", 1, ["123"]),
    ("123 abc 456", "[0-9]+", 0, []),
    ("123 abc 456", "[0-9]+", 5, ["123", "456"]),
    ("123 abc 456", "xyz", -1, []),
    ("123 abc 456", "[0-9]*", -1, ["123", "", "", "", "", "456"]),  # empty matches right after a match are dropped
    ("baaa", "a*", -1, ["", "aaa"]),
    ("a,b,,c", "[^,]*", -1, ["a", "b", "", "c"]),
    ("aaa", "", -1, ["", "", "", ""]),
    ("ééé", "", 2, ["", ""]),
    ("ééé", "", -1, ["", "", "", ""]),  # the search steps one character, not one byte
    ("foofoo foo", "\\bfoo\\b", -1, ["foo"]),  # later searches still see the text before them
    ("abab", "^ab", -1, ["ab"]),
    ("1a2b3c", "[a-z]", -2, ["a", "b", "c"]),
]


@pytest.mark.parametrize(("text", "pattern", "limit", "expected"), FIND_ALL_ROWS)
def test_find_all(text: str, pattern: str, limit: int, expected: list[str]) -> None:
    assert find_all(text, pattern, limit) == expected
    assert evaluate("s.findAll(p, n)", s=text, p=pattern, n=limit) == expected
    if limit < 0:
        assert evaluate("s.findAll(p)", s=text, p=pattern) == expected


def test_doc_examples() -> None:
    assert evaluate("'abc 123'.find('[0-9]+')") == "123"
    assert evaluate("'123 abc 456'.findAll('[0-9]+')") == ["123", "456"]
    assert evaluate("'123 abc 456'.findAll('[0-9]+', 1)") == ["123"]


def test_runtime_pattern_error() -> None:
    with pytest.raises(EvalError) as error:
        evaluate("'abc'.find(p)", p="(")
    assert str(error.value) == "Illegal regex: error parsing regexp: missing closing ): `(`"
    with pytest.raises(EvalError) as error:
        evaluate("'abc'.findAll(p, 2)", p="a**")
    assert str(error.value) == "Illegal regex: error parsing regexp: invalid nested repetition operator: `**`"


@pytest.mark.parametrize("expr", ["'abc'.find('(')", "'abc'.findAll('[a')", "'abc'.findAll('a{1001}', 1)"])
def test_literal_pattern_fails_before_evaluation(expr: str) -> None:
    """Kubernetes compiles literal patterns when it builds the program (regex optimisation)."""
    with pytest.raises(PlanError) as error:
        env().compile(expr)
    assert str(error.value).startswith("error parsing regexp: ")


def test_types() -> None:
    assert env().compile("'a'.find('a')").output_type == kcel.checker.types.STRING
    assert str(env().compile("'a'.findAll('a')").output_type) == "list(string)"
    with pytest.raises(CompileError):
        env().compile("1.find('a')")
    with pytest.raises(EvalError, match="no such overload"):
        evaluate("x.find('a')", x=1)


# -- costs -------------------------------------------------------------------------------------

# (expression, runtime cost: ceil((1 + size(s)) * 0.1) * ceil(size(re) * 0.25))
COST_ROWS = [
    ("'abc 123 def 123'.find('123')", 2),
    ("'abc 123 def 123'.findAll('123')", 2),
    ("'abc 123 def 123'.findAll('123', 1)", 2),
    ("''.find('[0-9]+')", 2),  # the +1 keeps an empty string from costing nothing
    ("'0123456789012345678901234'.find('[a-z]+[0-9]*(x|y)')", 3 * 5),
]


@pytest.mark.parametrize(("expr", "cost"), COST_ROWS)
def test_runtime_costs(expr: str, cost: int) -> None:
    assert env().compile(expr).evaluate_with_cost({})[1] == cost


# (receiver size, pattern size, estimate)
ESTIMATE_ROWS = [
    (SizeEstimate(15, 15), SizeEstimate(3, 3), CostEstimate(2, 2)),
    (SizeEstimate(0, 12), SizeEstimate(0, 12), CostEstimate(0, 6)),
    (SizeEstimate(0, UINT64_MAX), SizeEstimate(4, 4), CostEstimate(1, 1844674407370955264)),
    (SizeEstimate(0, UINT64_MAX), SizeEstimate(0, UINT64_MAX), CostEstimate(0, UINT64_MAX)),
]


@pytest.mark.parametrize(("text", "pattern", "expected"), ESTIMATE_ROWS)
def test_estimates(text: SizeEstimate, pattern: SizeEstimate, expected: CostEstimate) -> None:
    for overload in OVERLOADS.values():
        assert overload.estimate is not None
        sizes = [text, pattern] if len(overload.args) == 2 else [text, pattern, SizeEstimate(1, 1)]
        assert overload.estimate(SizedCall(sizes)) == CallEstimate(expected, SizeEstimate(0, text.max))


def test_overload_ids() -> None:
    assert sorted(OVERLOADS) == ["string_find_all_string", "string_find_all_string_int", "string_find_string"]


# -- Kubernetes' own tables (../shared/k8s-cases) ----------------------------------------------

CASES_DIR = SHARED / "k8s-cases"
if not CASES_DIR.is_dir():
    pytest.skip(f"k8s-cases not found at {CASES_DIR} (../shared is absent)", allow_module_level=True)


def _regex_cost_cases() -> list[Any]:
    document = json.loads((CASES_DIR / "apiserver-library-cost_test.json").read_text(encoding="utf-8"))
    return [
        pytest.param(case, id=case["id"])
        for case in document["cases"]
        if case["kind"] == "cost" and (".find(" in case["expression"] or ".findAll(" in case["expression"])
    ]


@pytest.mark.parametrize("case", _regex_cost_cases())
def test_k8s_regex_cost_cases(case: dict[str, Any]) -> None:
    """Runtime cost (no list literals here, so cel-go's unoptimised program costs what kcel's does) and estimate."""
    program = env().compile(case["expression"])
    assert program.evaluate_with_cost({})[1] == case["expect"]["runtime_cost"]
    estimate = env().estimate_cost(program, StringSizes(12))
    assert {"min": estimate.min, "max": estimate.max} == case["expect"]["estimated_cost"]
