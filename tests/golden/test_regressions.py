"""Regressions for disagreements with cel-go found by the reference engine (issue: exactly cel-go), each with the
answer cel-go itself gave."""

from __future__ import annotations

import pytest

import kcel


@pytest.mark.parametrize(("version", "accepted"), [("1.30", False), ("1.32", False), ("1.33", True), ("1.37", True)])
@pytest.mark.parametrize("expr", ["[1, 2].first()", "[1, 2].last()", "optional.unwrap([optional.of(1)])"])
def test_optional_library_functions_arrive_with_cel_go_v0_23(version: str, accepted: bool, expr: str) -> None:
    """cel-go v0.23 (Kubernetes 1.33) brought them; older API servers answer `undeclared reference`, stored
    expressions included."""
    for environment in ("new", "stored"):
        env = kcel.Env(k8s_version=version, environment=environment)
        if accepted:
            env.compile(expr)
        else:
            with pytest.raises(kcel.CompileError, match="undeclared reference to '(first|last|optional)'"):
                env.compile(expr)


@pytest.mark.parametrize(
    ("expr", "cost"), [("ls.join(t)", 3), ("t.substring(4, x)", 3), ("t.lowerAscii()", 2), ("t.split(',')", 2)]
)
def test_plain_environment_costs_as_cel_go_without_kubernetes_estimator(expr: str, cost: int) -> None:
    """cel-go prices the strings extension at its default, 1 a call; Kubernetes' estimator prices it by size."""
    variables = {"ls": "list(string)", "t": "string", "x": "int"}
    activation = {"ls": ["a", "b"], "t": "abcdefghijklmnopqrstuvwxyz" * 4, "x": 5}
    plain = kcel.Env(variables=variables)
    program = plain.compile(expr)
    assert program.evaluate_with_cost(activation)[1] == cost
    assert plain.estimate_cost(program) == kcel.CostEstimate(cost, cost)
    kubernetes = kcel.Env(variables=variables, k8s_version="1.37")
    assert kubernetes.compile(expr).evaluate_with_cost(activation)[1] > cost


@pytest.mark.parametrize("version", [None, "1.30", "1.37"])
@pytest.mark.parametrize("expr", ["double('nan') < 1.0", "1 <= double('nan')", "dyn(1u) > double('nan')",
                                  "double('nan') >= double('nan')", "dyn(double('nan')) < 'a'"])  # fmt: skip
def test_nan_cannot_be_ordered(version: str | None, expr: str) -> None:
    """cel-go's Double.Compare (and Int/Uint.Compare with a NaN): an error, not false; `'a' > double('nan')` stays
    `no such overload` (the string compares first)."""
    env = kcel.Env(k8s_version=version)
    with pytest.raises(kcel.EvalError, match="NaN values cannot be ordered"):
        env.compile(expr).evaluate({})
    with pytest.raises(kcel.EvalError, match="no such overload"):
        env.compile("dyn('a') > double('nan')").evaluate({})
    assert env.compile("[1.0, double('nan')].max()").evaluate({}) == 1.0  # lists.max does not compare that way


@pytest.mark.parametrize(("expr", "answer"), [
    ("[][0] + [][1]", "bytes"),  # add_bytes is declared first
    ("{}.c + duration('1s')", "google.protobuf.Duration"),  # add_duration_duration before add_timestamp_duration
    ("{}['u'] * dyn(1)", "double"),
    ("-([][0])", "double"),
    ("[][0] - {}.a", "double"),
    ("{}.transformMap(k, v, k + v)", "map(bytes, bytes)"),
    ("([][0] + [][1]) + 'a'", "found no matching overload for '_+_' applied to '(bytes, string)'"),
    ("(true ? (duration('1s') + optional.none().value()) : timestamp(0)) - timestamp(0)",
     "found no matching overload for '_?_:_' applied to '(bool, duration, timestamp)'"),
    ("optional.none().or(1)", "found no matching overload for 'or' applied to 'optional_type(dyn).(int)'"),
])  # fmt: skip
def test_a_free_type_parameter_takes_the_first_overload_cel_go_declares(expr: str, answer: str) -> None:
    """cel-go tries overloads in declaration order and the first that fits binds the parameter; a parameter still
    free when nothing fits is named `dyn`."""
    for env in (kcel.Env(), kcel.Env(k8s_version="1.33"), kcel.Env(k8s_version="1.37")):  # transformMap: 1.33+
        try:
            assert str(env.compile(expr).output_type) == answer
        except kcel.CompileError as err:
            assert answer in str(err)


@pytest.mark.parametrize(("version", "rejected"), [("1.30", True), ("1.31", True), ("1.32", False)])
@pytest.mark.parametrize("expr", ["optional.none().optMap(v, 2)", "optional.of([]).optMap(v, v)",
                                  "[?optional.none().optFlatMap(v, optional.of(1))]"])  # fmt: skip
def test_opt_map_of_a_generic_target_is_rejected_before_cel_go_v0_22(version: str, rejected: bool, expr: str) -> None:
    """cel-go before v0.22 put optMap's target into its expansion twice under the same ids; checked twice, a type
    variable in it conflicts with itself, and the API server rejects the rule (1:14 and such, cel-go's position)."""
    env = kcel.Env(k8s_version=version)
    assert env.compile("optional.of(1).optMap(v, v + 1)").evaluate({}).value == 2
    if rejected:
        with pytest.raises(kcel.CompileError, match="incompatible type already exists for expression"):
            env.compile(expr)
    else:
        env.compile(expr)


@pytest.mark.parametrize(("expr", "cost"), [("[0, 1, 2].map(x, 1.0)", 7), ("[0, 1, 2].map(x, [1])", 7),
                                            ("[0, 1, 2].map(x, x)", 40)])  # fmt: skip
def test_a_constant_mapped_element_is_a_folded_list(expr: str, cost: int) -> None:
    """`@result + [1.0]`: OptOptimize folds the one-element literal, which then costs nothing."""
    assert kcel.Env(k8s_version="1.37").compile(expr).evaluate_with_cost({})[1] == cost


@pytest.mark.parametrize(("expr", "error"), [
    ("dyn(null).size()", "no such overload: size"),  # no Sizer trait
    ("dyn(true) + 1", "no such overload: _+_"),  # no Adder trait
    ("dyn(1) + dyn('a')", "no such overload"),  # Int.Add rejects the string
    ("-dyn('a')", "no such overload"),  # a string takes method calls (ReceiverType): its Receive answers
    ("dyn(true) < 1", "no such overload"),
    ("dyn(1).contains('a')", "no such overload"),  # type guards disabled: the binding checks
    ("dyn(1).getHours()", "no such overload: getHours(int)"),  # a type guard names the arguments
    ("dyn(1).charAt(0)", "no such overload: charAt(int, int)"),
    ("dyn(1).substring(0, 1)", "no such overload: substring(int, int, int)"),
    ("[].join(dyn(1))", "no such overload: join(list, int)"),
    ("sets.contains(dyn(1), [1])", "no such overload: sets.contains(int, list)"),
    ("quantity(dyn(1))", "no such overload: quantity(int)"),
    ("dyn('a').isSorted()", "no such overload: isSorted(string)"),
])  # fmt: skip
def test_no_such_overload_in_cel_go_words(expr: str, error: str) -> None:
    for version in ("1.30", "1.37"):
        with pytest.raises(kcel.EvalError) as info:
            kcel.Env(k8s_version=version).compile(expr).evaluate({})
        assert str(info.value) == error


@pytest.mark.parametrize(("expr", "cost"), [
    ("dyn(m).a", 4),  # m, dyn(), the relative attribute, its qualifier
    ("dyn(ml).a[0]", 5),  # one relative attribute, two qualifiers (not two attributes)
    ("(flag ? m : m).a", 2),  # a conditional is an attribute: flag and the qualifier
    ("dyn(m).?a.value()", 5),
    ("m.?a.orValue(1)", 2),
    ("m.?c.orValue(y)", 2),  # an absent optional qualifier is not observed; y is
    ("{}.?b", 1),
    ("l[?5]", 1),
    ("l[?0]", 2),
    ("l[l[0]]", 3),  # an attribute as an index is resolved: its qualifiers cost, not the attribute itself
    ("l[l[l[0]]]", 4),
    ("l[[0][0]]", 3),  # a relative attribute too
    ("l[dyn(m).a]", 5),
])  # fmt: skip
def test_attributes_and_qualifiers_cost_as_cel_go_plans_them(expr: str, cost: int) -> None:
    variables = {"m": "map(string, int)", "ml": "map(string, list(int))", "l": "list(int)", "flag": "bool", "y": "int"}
    activation = {"m": {"a": 1}, "ml": {"a": [1]}, "l": [1, 2, 3], "flag": True, "y": -3}
    for version in (None, "1.37"):
        program = kcel.Env(variables=variables, k8s_version=version).compile(expr)
        assert program.evaluate_with_cost(activation)[1] == cost


@pytest.mark.parametrize(("expr", "cost", "value"), [
    ("x in [1, 2, 3]", 1, False),  # a constant list of primitives is a set: the test itself costs nothing
    ("dyn(x) in [7.0]", 2, True),
    ("x in []", 0, False),  # an empty one is false, and x is not even read
    ("(1/0) in []", 0, False),
    ("b in [b'a']", 2, False),  # bytes are not hashed: the list is scanned
    ("{'a': {'b': 1}}.a.b", 3, 1),  # nested constant maps fold
    ("{dyn(1.5): 1}[1.5]", 2, 1),
    ("type(int) == type", 1, True),
    ("dyn({}).size()", 1, 0),
])  # fmt: skip
def test_constant_folding_costs_as_cel_go_optimizes(expr: str, cost: int, value: object) -> None:
    for version in (None, "1.30", "1.37"):
        env = kcel.Env(variables={"x": "int", "b": "bytes"}, k8s_version=version)
        assert env.compile(expr).evaluate_with_cost({"x": 7, "b": b"ab"}) == (value, cost)


@pytest.mark.parametrize(("expr", "cost", "error"), [
    ("!(x / 0 == 1)", 4, "division by zero"),  # `==` and `!` are charged although their operand failed
    ("{}.a[-1]", 2, "no such key: a"),  # the qualifier after the failing one is never evaluated, nor charged
    ("[x / 0 == 1, true].exists(y, y)", 13, "division by zero"),  # the literal is charged, its element failed
    ("x / 0 + l.size()", 5, "division by zero"),  # both operands of a binary call are evaluated
    ("m[string(x / 0)]", 5, "division by zero"),  # a computed key is a qualifier, observed though it failed
    ("m[?string(x / 0)]", 4, "division by zero"),  # an optional one is not
    ("m[ms[string(x)]]", 5, "no such key: 7"),  # a resolved attribute as a key: its qualifier and the outer's
    ("[1][l[3]]", 3, "index out of bounds: 3"),
    ("ls[1].matches('a')", 2, "index out of bounds: 1"),  # a literal pattern makes a call of variable arguments:
    ("ls[1].matches(dyn('a'))", 2, "index out of bounds: 1"),  # it stops at the failed one, and is not charged
    ("ls[1].matches(ls[0])", 5, "index out of bounds: 1"),  # (interpreter.MatchesRegexOptimization)
    ("'abc'.substring(m['b'], 1)", 2, "no such key: b"),  # a call of three arguments stops at a failed one,
    ("'abc'.replace('a', 'b', m['b'])", 3, "no such key: b"),  # charged when it was the last (all observed)
    ("{'a': x / 0}", 32, "division by zero"),
])  # fmt: skip
def test_failures_cost_what_cel_go_charges(expr: str, cost: int, error: str) -> None:
    variables = {"x": "int", "l": "list(int)", "m": "map(string, int)", "ms": "map(string, string)",
                 "ls": "list(string)"}  # fmt: skip
    activation = {"x": 7, "l": [1], "m": {"a": 1}, "ms": {}, "ls": ["a"]}
    for version in (None, "1.37"):
        program = kcel.Env(variables=variables, k8s_version=version).compile(expr)
        with pytest.raises(kcel.EvalError, match=error) as info:
            program.evaluate_with_cost(activation)
        assert info.value.cost == cost
        with pytest.raises(kcel.EvalError, match=error):  # the limit at the cost spent does not change the outcome
            program.evaluate_with_cost(activation, cost_limit=cost)


@pytest.mark.parametrize(("expr", "cost", "error"), [
    ("[ls[0], ls[0]][1]", 13, "index out of bounds: 0"),  # the relative attribute on the failed literal is observed
    ("(true ? [2][3] : 1)", 1, "index out of bounds: 3"),  # a `?:` branch is resolved: only its qualifier costs
    ("(true ? [x / 0][0] : 1)", 12, "division by zero"),
    ("dyn(x / 0).a", 4, "division by zero"),
])  # fmt: skip
def test_relative_attributes_cost_as_cel_go_observes_them(expr: str, cost: int, error: str) -> None:
    program = kcel.Env(variables={"x": "int", "ls": "list(string)"}, k8s_version="1.37").compile(expr)
    with pytest.raises(kcel.EvalError, match=error) as info:
        program.evaluate_with_cost({"x": 7, "ls": []})
    assert info.value.cost == cost


@pytest.mark.parametrize(("expr", "cost"), [
    ("[1, 2, 3].map(v, [v][5])", 76),  # a failed step leaves an error in the accumulator; the loop goes on
    ("[1, 2, 3].filter(v, [v][5] > 0)", 43),
    ("[1, 2, 3].all(v, v / 0 > 0)", 19),
])  # fmt: skip
def test_a_failed_step_does_not_stop_the_loop(expr: str, cost: int) -> None:
    with pytest.raises(kcel.EvalError) as info:
        kcel.Env(k8s_version="1.37").compile(expr).evaluate_with_cost({})
    assert info.value.cost == cost


@pytest.mark.parametrize(("expr", "first_error"), [
    ("`a`", "1:1: Syntax error: mismatched input '`a`' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', "
            "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"),
    ("a.", "1:3: Syntax error: no viable alternative at input '.'"),
    ("1.", "1:3: Syntax error: no viable alternative at input '.'"),
    ("a. + 1", "1:4: Syntax error: no viable alternative at input '. +'"),
])  # fmt: skip
def test_syntax_errors_in_cel_go_words(expr: str, first_error: str) -> None:
    with pytest.raises(kcel.CompileError) as info:
        kcel.parse(expr)
    assert str(info.value).splitlines()[0] == f"ERROR: <input>:{first_error}"


def test_a_trailing_percent_is_found_before_the_arguments_are_counted_at_compile_time() -> None:
    env = kcel.Env(variables={"s": "string"}, k8s_version="1.37")
    with pytest.raises(kcel.CompileError, match="1:11: unexpected end of string"):
        env.compile("'%'.format([])")
    with pytest.raises(kcel.EvalError, match="index 0 out of range"):  # evaluating, the arguments come first
        env.compile("s.format([])").evaluate({"s": "%"})


def test_kubernetes_1_30_names_the_optional_type_as_cel_go_v0_17() -> None:
    """cel-go v0.20 renamed `optional` to `optional_type` (and declared the name)."""
    old, new = kcel.Env(k8s_version="1.30"), kcel.Env(k8s_version="1.31")
    with pytest.raises(kcel.CompileError, match=r"applied to '\(optional\(int\), int\)'"):
        old.compile("optional.of(1) + 1")
    with pytest.raises(kcel.CompileError, match=r"applied to '\(optional_type\(int\), int\)'"):
        new.compile("optional.of(1) + 1")
    with pytest.raises(kcel.CompileError, match="undeclared reference to 'optional_type'"):
        old.compile("type(optional.of(1)) == optional_type")
    assert new.compile("type(optional.of(1)) == optional_type").evaluate({}) is True


def test_a_bytes_map_key_is_the_internal_error_the_api_server_reports() -> None:
    """cel-go panics hashing a bytes key (a Go slice); Program.Eval recovers it as an internal error, and the map's
    construction is never charged."""
    program = kcel.Env(variables={"b": "bytes"}, k8s_version="1.37").compile("{dyn(b): 1}")
    with pytest.raises(kcel.EvalError, match="internal error: runtime error: hash of unhashable type types.Bytes") as e:
        program.evaluate_with_cost({"b": b"a"})
    assert e.value.cost == 2


@pytest.mark.parametrize(("version", "bounded"), [("1.30", False), ("1.32", False), ("1.33", True), (None, True)])
def test_dyn_keeps_its_operand_size_from_cel_go_v0_23(version: str | None, bounded: bool) -> None:
    """`dyn(f) == b`: before v0.23 `dyn(f)` was a call of unknown size, so comparing it with bytes was unbounded."""
    env = kcel.Env(variables={"f": "double", "b": "bytes"}, k8s_version=version)
    estimate = env.estimate_cost(env.compile("dyn(f) == b"))
    assert (estimate.max < 100) == bounded


@pytest.mark.parametrize(("expr", "value", "cost"), [
    ("-1", -1, 0), ("--1", 1, 0), ("---1", -1, 1), ("- -1", 1, 0), ("-(-1)", 1, 1), ("---1.5", -1.5, 1),
])  # fmt: skip
def test_a_run_of_minus_signs_takes_the_literal_sign_as_cel_go_lexes_it(expr: str, value: float, cost: int) -> None:
    """ANTLR lexes no signed number after `-`: `---1` is one negation of 1 (an odd run), `--1` the literal 1."""
    assert kcel.Env().compile(expr).evaluate_with_cost({}) == (value, cost)


def test_a_run_of_minus_signs_on_the_smallest_int_is_an_invalid_literal() -> None:
    with pytest.raises(kcel.CompileError, match="1:3: invalid int literal"):
        kcel.parse("--9223372036854775808")


@pytest.mark.parametrize(
    ("version", "answers"), [("1.30", (10, 10, -1)), ("1.36", (10, 10, -1)), ("1.37", (3, 3, None))]
)
def test_an_empty_substring_at_an_offset_as_each_cel_go_finds_it(version: str, answers: tuple[int, ...]) -> None:
    """Before cel-go v0.29 an empty substring was found at the offset given, unchecked; since, clamped or an error."""
    env = kcel.Env(k8s_version=version)
    exprs = ("'abc'.indexOf('', 10)", "'abc'.lastIndexOf('', 10)", "'abc'.lastIndexOf('', -1)")
    for expr, answer in zip(exprs, answers, strict=True):
        if answer is None:
            with pytest.raises(kcel.EvalError, match="index out of range: -1"):
                env.compile(expr).evaluate({})
        else:
            assert env.compile(expr).evaluate({}) == answer


@pytest.mark.parametrize(("version", "fails"), [("1.30", True), ("1.31", True), ("1.32", False), ("1.37", False)])
def test_an_offset_past_the_end_before_cel_go_v0_22(version: str, fails: bool) -> None:
    program = kcel.Env(k8s_version=version).compile("'abc'.indexOf('b', 3)")
    if fails:
        with pytest.raises(kcel.EvalError, match="index out of range: 3"):
            program.evaluate({})
    else:
        assert program.evaluate({}) == -1


def test_uint_of_a_signed_text_is_a_conversion_error() -> None:
    """strconv.ParseUint takes no sign; a constant argument fails the program when it is built."""
    with pytest.raises(kcel.PlanError, match="type conversion error from 'string' to 'uint'"):
        kcel.Env().compile("uint('+1')")
    assert kcel.Env().compile("int('+1')").evaluate({}) == 1


@pytest.mark.parametrize(("version", "text"), [
    ("1.30", "1.500000\u202f\u00d7\u202f10\u2070\u2070"), ("1.32", "1.500000\u202f\u00d7\u202f10\u2070\u2070"),
    ("1.33", "1.500000\u00d710\u2070\u2070"),
])  # fmt: skip
def test_scientific_format_as_each_api_servers_x_text_prints_it(version: str, text: str) -> None:
    assert kcel.Env(k8s_version=version).compile("'%e'.format([1.5])").evaluate({}) == text


def test_format_takes_mixed_literal_arguments_at_1_30() -> None:
    env = kcel.Env(variables={"f": "double", "s": "string"}, k8s_version="1.30")
    assert env.compile("'%s %s'.format([f, s])").evaluate({"f": 1.5, "s": "abc"}) == "1.5 abc"
    with pytest.raises(kcel.CompileError, match="expected type 'double' but found 'string'"):
        env.compile("[f, s]")


@pytest.mark.parametrize(("version", "answers"), [
    ("1.30", ("index out of range: 0", "index out of range: -1")),
    ("1.33", (-1, "index out of range: -1")),
    ("1.36", (-1, -1)),
])  # fmt: skip
def test_searching_an_empty_text_as_each_cel_go_does(version: str, answers: tuple[object, object]) -> None:
    env = kcel.Env(k8s_version=version)
    for expr, answer in zip(("''.indexOf('a')", "''.lastIndexOf('a')"), answers, strict=True):
        if isinstance(answer, str):
            with pytest.raises(kcel.EvalError, match=answer):
                env.compile(expr).evaluate({})
        else:
            assert env.compile(expr).evaluate({}) == answer


@pytest.mark.parametrize("version", [None, "1.30", "1.37"])
def test_a_presence_test_as_a_conditional_branch_is_resolved(version: str | None) -> None:
    env = kcel.Env(variables={"flag": "bool", "ms": "map(string, string)"}, k8s_version=version)
    program = env.compile("(flag ? has(ms.b) : true)")
    assert program.evaluate_with_cost({"flag": True, "ms": {}}) == (False, 2)


def test_sort_of_something_that_is_no_list_fails_its_trait_check() -> None:
    """`sort` is a singleton guarded by the Lister trait (ext/lists.go), like the operators."""
    env = kcel.Env(k8s_version="1.37")
    with pytest.raises(kcel.EvalError, match="^no such overload: sort$"):
        env.compile("dyn(false).sort()").evaluate({})
    with pytest.raises(kcel.EvalError, match="^no such overload$"):  # a string takes method calls itself
        env.compile("dyn('a').sort()").evaluate({})


@pytest.mark.parametrize("expr", ["[][1].sort()", "[[1]][2].distinct()", "[1, 2].sortBy(v, [v][5])"])
def test_a_failed_list_panics_cel_gos_list_cost_tracker(expr: str) -> None:
    program = kcel.Env(k8s_version="1.37").compile(expr)
    with pytest.raises(kcel.EvalError, match=r"^internal error: interface conversion: \*types.Err is not traits"):
        program.evaluate_with_cost({})
    with pytest.raises(kcel.EvalError, match="index out of bounds"):  # without a cost tracker: the list's error
        program.evaluate({})


@pytest.mark.parametrize(("expr", "panic", "error"), [
    ("dyn(1).distinct()", "types.Int is not traits.Lister: missing method Contains", "no such overload: distinct"),
    ("dyn({}).distinct()", r"\*types.baseMap is not traits.Lister: missing method Add", "no such overload: distinct"),
    ("[1].flatten(dyn('a'))", "ref.Val is types.String, not types.Int", r"no such overload: list.flatten\(string\)"),
])  # fmt: skip
def test_cel_gos_list_cost_trackers_panic_on_what_they_do_not_expect(expr: str, panic: str, error: str) -> None:
    program = kcel.Env(k8s_version="1.37").compile(expr)
    with pytest.raises(kcel.EvalError, match=f"^internal error: interface conversion: {panic}$"):
        program.evaluate_with_cost({})
    with pytest.raises(kcel.EvalError, match=f"^{error}"):
        program.evaluate({})


@pytest.mark.parametrize(("expr", "cost"), [("[1, 2].sortBy(v, 'a'.charAt(3)).size()", 29),
                                            ("[[1][2]].distinct().size() == 0 || true", 12)])  # fmt: skip
def test_a_panic_ends_the_evaluation(expr: str, cost: int) -> None:
    """A recovered panic is not absorbed by `||` nor charged further: cel-go unwinds the whole evaluation."""
    with pytest.raises(kcel.EvalError, match="^internal error") as info:
        kcel.Env(k8s_version="1.37").compile(expr).evaluate_with_cost({})
    assert info.value.cost == cost


@pytest.mark.parametrize(("expr", "cost"), [("dyn(1).slice(0, 1)", 12), ("dyn(1).reverse()", 12), ("dyn(1).sort()", 1)])
def test_a_call_the_checker_pinned_is_charged_by_its_tracker_when_dispatch_fails(expr: str, cost: int) -> None:
    """One overload chosen: its cost with the error as the result (list_slice: 1 + 10 + 1); several: 1."""
    with pytest.raises(kcel.EvalError, match="no such overload") as info:
        kcel.Env(k8s_version="1.37").compile(expr).evaluate_with_cost({})
    assert info.value.cost == cost


@pytest.mark.parametrize(("expr", "plain", "kubernetes"), [
    ("has(e.b.c)", 2, 1),  # the test is observed though its operand failed: 1, which Kubernetes refunds
    ("has([e][1].c)", 13, 12),
    ("has({'a': 1, 'b': 2}.transformMapEntry(k, v, {'c': v}).c)", 68, 67),
    ("x > 0 ? has([e][1].c) : false", 14, 14),  # a `?:` branch is resolved, the test not observed
])  # fmt: skip
def test_a_presence_test_whose_operand_failed_costs_as_cel_go_observes_it(
    expr: str, plain: int, kubernetes: int
) -> None:
    for version, cost in ((None, plain), ("1.37", kubernetes)):
        program = kcel.Env(variables={"e": "map(string, dyn)", "x": "int"}, k8s_version=version).compile(expr)
        with pytest.raises(kcel.EvalError) as info:
            program.evaluate_with_cost({"e": {}, "x": 1})
        assert info.value.cost == cost


@pytest.mark.parametrize(("expr", "cost"), [
    ("dyn(s) < dyn(s)", 5),  # no overload pinned: no overload id, and cel-go's tracker charges 1
    ("dyn(s) + dyn(s)", 5),
    ("x in dyn(l)", 4),
    ("dyn(s) < s", 13),  # one overload pinned: priced by the sizes
    ("dyn(s) == dyn(s)", 14),  # equality has one overload
    ("{true: 1}[has(m.a)]", 3),  # a presence test as an index is resolved: the test itself is not charged
    ("{'a': 1}.transformMap(k, v, x / 0)", 6),  # cel.@mapInsert is a call of three arguments, the last failed
])  # fmt: skip
def test_operator_costs_follow_the_overload_the_checker_chose(expr: str, cost: int) -> None:
    env = kcel.Env(variables={"s": "string", "l": "list(int)", "x": "int", "m": "map(string, int)"})
    program = env.compile(expr)
    activation = {"s": "a" * 100, "l": [1] * 50, "x": 7, "m": {"a": 1}}
    try:
        assert program.evaluate_with_cost(activation)[1] == cost
    except kcel.EvalError as err:
        assert err.cost == cost


@pytest.mark.parametrize(("expr", "error", "cost"), [
    ("dyn(b) in {'a': 2}", "runtime error: hash of unhashable type types.Bytes", 2),  # a Go map hashes the key
    ("{'a': 1, ?dyn(b): optional.none()}", "runtime error: hash of unhashable type types.Bytes", 3),
    ("{?dyn(b): optional.none()}", "hash of unhashable type: types.Bytes", 3),  # Go's delete on an empty map
])  # fmt: skip
def test_a_bytes_key_panics_in_a_go_map(expr: str, error: str, cost: int) -> None:
    env = kcel.Env(variables={"b": "bytes"})  # Kubernetes rejects the mixed literals
    with pytest.raises(kcel.EvalError, match=f"^internal error: {error}$") as info:
        env.compile(expr).evaluate_with_cost({"b": b"a"})
    assert info.value.cost == cost
    assert env.compile("dyn(b) in {}").evaluate({"b": b"a"}) is False


@pytest.mark.parametrize(("expr", "cost"), [
    ("cel.bind(v1, cel.bind(v2, 3, 1/0 + v2), v1)", 4),  # v2 is read though the other operand failed
    ("(false ? [] : [])[1].distinct().sortBy(v, v)", 1),  # the macro's input is read after a panic: not charged
    ("x > 0 ? {}[9223372036854775808u - (x > 0 ? u : 1u)] : 1", 6),  # a resolved branch with a computed key
    ("dyn([b][0]) >= [][x]", 17),  # `>=` pinned to greater_equals_bool: 1, though the operand is bytes
])  # fmt: skip
def test_failure_costs_of_reads_and_resolved_branches(expr: str, cost: int) -> None:
    program = kcel.Env(variables={"x": "int", "u": "uint", "b": "bytes"}).compile(expr)
    with pytest.raises(kcel.EvalError) as info:
        program.evaluate_with_cost({"x": 7, "u": 5, "b": b"ab"})
    assert info.value.cost == cost


def test_a_bound_variable_that_failed_is_evaluated_once() -> None:
    """cel-go keeps a bind's (or block slot's) error as its value: the second read costs the read only."""
    program = kcel.Env(variables={"x": "int"}).compile("cel.bind(v, [1][x], v > 0 || v < 0 || true)")
    assert program.evaluate_with_cost({"x": 7}) == (True, 6)


def test_a_literal_element_of_free_type_widens_with_the_elements_after_it() -> None:
    """cel-go's joinTypes keeps the first element's type parameter, which a later `dyn` widens: the homogeneous
    literal check then finds the second element differing from `dyn`, not the third from `list(string)`."""
    env = kcel.Env(variables={"ls": "list(string)"}, k8s_version="1.37")
    with pytest.raises(kcel.CompileError, match="1:30: expected type 'dyn' but found 'list\\(string\\)'"):
        env.compile("[optional.none().value()[3], ls, dyn(ls)]")


@pytest.mark.parametrize(("expr", "position"), [
    ("{[][0]: 1, 0u: 2}[dyn(x)]", "1:12"), ("dyn(x) in {[][0]: 1, 0u: 2}", "1:22"),
    ("{?{}[dyn(lf[dyn(1u)])]: optional.none(), 0u: ls}[dyn(x)]", "1:42"),
])  # fmt: skip
def test_a_later_call_widens_a_literal_key_of_free_type(expr: str, position: str) -> None:
    """cel-go resolves a call with its arguments' types unresolved: a map key bound by the next key (`uint`) widens
    to `dyn` with a `dyn` index, and the homogeneous literal check finds the next key differing from it."""
    env = kcel.Env(variables={"x": "int", "lf": "list(double)", "ls": "list(string)"}, k8s_version="1.37")
    with pytest.raises(kcel.CompileError, match=f"{position}: expected type 'dyn' but found '(uint|int)'"):
        env.compile(expr)
    assert str(kcel.Env(variables={"x": "int"}).compile("{[][0]: 1, 0u: 2}[dyn(x)]").output_type) == "int"


def test_type_parameters_bound_in_a_chain_make_no_cycle() -> None:
    """A parameter is not bound to one whose binding leads back to it (cel-go notReferencedIn, one step at a
    time): this once recursed without end."""
    assert str(kcel.Env().compile("[].filter(v2, true).filter(v1, v1)").output_type) == "list(bool)"


def test_membership_in_an_empty_constant_list_is_a_constant() -> None:
    """Folded to `false` when planning, so `[x in []]` is a constant list too, and x is never read."""
    program = kcel.Env(variables={"f": "double"}, k8s_version="1.37").compile("[1, 2].map(v, (dyn(f) in []))")
    assert program.evaluate_with_cost({"f": 1.5}) == ([False, False], 5)


@pytest.mark.parametrize(("version", "cost"), [("1.30", 9), ("1.31", 9), ("1.32", 6), ("1.37", 6)])
def test_opt_map_runs_its_value_first_before_cel_go_v0_22(version: str, cost: int) -> None:
    """The expansion's initialiser (`target.value()`) ran at once before v0.22, used or not; since, on first use."""
    env = kcel.Env(variables={"b": "bytes", "f": "double"}, k8s_version=version)
    program = env.compile("optional.of(b).optMap(v1, f).value()")
    assert program.evaluate_with_cost({"b": b"ab", "f": 1.5}) == (1.5, cost)


@pytest.mark.parametrize(
    ("version", "estimate"),
    [("1.30", (32, 3689348814741910560)), ("1.32", (32, 3689348814741910560)), ("1.33", (33, 33))],
)
def test_entry_sizes_are_estimated_from_cel_go_v0_23(version: str, estimate: tuple[int, int]) -> None:
    """Before cel-go v0.23 the estimator knows a literal's length but not the sizes of its entries."""
    env = kcel.Env(variables={"s": "string"}, k8s_version=version)
    assert env.estimate_cost(env.compile("{1: 'ab', 2: 'A b'}[3].split(s)")) == kcel.CostEstimate(*estimate)


@pytest.mark.parametrize(("expr", "kind"), [
    ('[cel.bind(v, "", timestamp("2023-13-01T00:00:00Z")), duration("2562048h")]', "Timestamp"),
    ('{(true ? timestamp("2023-13-01T00:00:00Z") : timestamp(0)): 1, 2: duration("2562048h")}', "Timestamp"),
    ('{1: duration("2562048h"), (true ? timestamp("2023-13-01T00:00:00Z") : timestamp(0)): 1}', "Duration"),
])  # fmt: skip
def test_the_first_failing_constant_conversion_in_source_order_fails_the_plan(expr: str, kind: str) -> None:
    """cel-go plans depth first: a failing conversion inside an element is found before one in a later element."""
    with pytest.raises(kcel.PlanError, match=f"type conversion error from 'string' to 'google.protobuf.{kind}'"):
        kcel.Env().compile(expr)


@pytest.mark.parametrize(("expr", "cost"), [
    ('"a" in dyn(["a", "b"])', 1), ("x in dyn([1, 2])", 2), ('[1, ("a" in dyn([]))]', 11), ("x in [1, 2]", 1),
    ("[1, x in []]", 0),
])  # fmt: skip
def test_a_constant_list_is_a_set_only_where_the_checker_pinned_in_list(expr: str, cost: int) -> None:
    """cel-go's maybeOptimizeSetMembership asks for the `in_list` overload: `dyn([...])` could be a map."""
    program = kcel.Env(variables={"x": "int"}).compile(expr)
    assert program.evaluate_with_cost({"x": 7})[1] == cost


@pytest.mark.parametrize(("expr", "cost"), [
    ('"2020-01-01T00:00:00Z" + dyn(x)', 5), ('"2020-01-01T00:00:00Z" + dyn([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])', 3),
    ('b"2020-01-01T00:00:00Z" + dyn(x)', 5),
])  # fmt: skip
def test_a_concatenation_pinned_to_strings_costs_the_operands_sizes_even_when_it_fails(expr: str, cost: int) -> None:
    """cel-go prices by the overload the checker chose (add_string: both sizes, 1 for a value without one), not by
    what the operands turn out to be; an unpinned `+` costs 1, even of two strings."""
    with pytest.raises(kcel.EvalError, match="no such overload") as info:
        kcel.Env(variables={"x": "int"}).compile(expr).evaluate_with_cost({"x": 7})
    assert info.value.cost == cost
    unpinned = kcel.Env().compile('dyn("2020-01-01T00:00:00Z") + dyn("2020-01-01T00:00:00Z")')
    assert unpinned.evaluate_with_cost({})[1] == 1


@pytest.mark.parametrize(("expr", "cost"), [
    ('(dyn(1u) > b"") ? [true] : [false]', 0), ('[!(dyn(1u) > b"")]', 11), ('dyn(1u) < "abc"', 1),
    ('"abcdefghijklmnopqrstuvwxyz" >= dyn([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])', 2),
])  # fmt: skip
def test_an_ordering_pinned_to_strings_or_bytes_costs_the_smaller_size_even_when_it_fails(expr: str, cost: int) -> None:
    """greater_bytes with an empty operand costs ceil(0 * 0.1) = 0 in cel-go's tracker, whatever the other is."""
    with pytest.raises(kcel.EvalError, match="no such overload") as info:
        kcel.Env().compile(expr).evaluate_with_cost({})
    assert info.value.cost == cost


@pytest.mark.parametrize(("expr", "cost"), [
    ("{true: 1}[has((flag ? m : m).a)]", 4), ("{true: 1}[has(m.a)]", 3), ("{1: 1}[(flag ? m : m).a]", 4),
    ("has((flag ? m : m).a)", 2),
])  # fmt: skip
def test_a_presence_test_on_a_conditional_as_a_key_charges_its_qualifier(expr: str, cost: int) -> None:
    """cel-go resolves the key: the condition, the `.a` qualifier on the chosen branch, the key and the index."""
    program = kcel.Env(variables={"m": "map(string, int)", "flag": "bool"}).compile(expr)
    assert program.evaluate_with_cost({"m": {"a": 1}, "flag": True})[1] == cost


def test_a_comprehension_result_is_resolved_when_checked() -> None:
    """cel-go substitutes a comprehension's result type at once (`list(bool)`), so a later `dyn` element does not
    widen it, and the homogeneous literal check tells the two lists apart."""
    env = kcel.Env(variables={"flag": "bool"}, k8s_version="1.37")
    with pytest.raises(kcel.CompileError, match="1:28: expected type 'list\\(bool\\)' but found 'list\\(dyn\\)'"):
        env.compile("[[1].map(v1, false, true), [flag, dyn(1)]]")


@pytest.mark.parametrize(("expr", "cost"), [
    ("{}.?a.b.c.hasValue()", 2), ("optional.of({'c': {}}).c.d", 3), ("optional.of({'c': {'d': 1}}).c.d", 4),
    ("optional.none().c", 2), ("optional.of({'c': {}}).c['missing'].orValue('d')", 3),
    ("has({}.?a.b)", 1), ("has(optional.of({'a': 1}).a)", 3), ("has(optional.of({'a': 1}).z)", 2),
    ("has({'foo': optional.none()}.foo.bar)", 34),
])  # fmt: skip
def test_qualifiers_of_an_optional_chain_are_charged_when_they_find_something(expr: str, cost: int) -> None:
    """After `.?f` or `[?k]`, or on an optional an attribute starts from, cel-go qualifies if present
    (QualifyIfPresent): what finds nothing costs nothing, a presence test's field included."""
    assert kcel.Env().compile(expr).evaluate_with_cost({})[1] == cost


@pytest.mark.parametrize(("expr", "error"), [
    ("{'foo': optional.of({'bar': 1})}.foo.bar", "no such key: bar"),
    ("{'foo': optional.of([1])}.foo[0]", "no such key: 0"), ("[optional.of({'a': 1})][0].a", "no such key: a"),
])  # fmt: skip
def test_an_optional_a_plain_qualifier_found_is_no_map(expr: str, error: str) -> None:
    """cel-go unwraps an optional only where an attribute starts or after `.?`: a plain qualifier applied to one that
    another qualifier found has no such key, and a presence test on it is false."""
    env = kcel.Env()
    with pytest.raises(kcel.EvalError, match=error):
        env.compile(expr).evaluate({})
    assert env.compile("has({'foo': optional.of({'bar': 1})}.foo.bar)").evaluate({}) is False
    assert env.compile("cel.bind(o, optional.of({'bar': 1}), o.bar)").evaluate({}).value == 1


CIDR_TWICE = "network address parse error during conversion from string: " * 2


@pytest.mark.parametrize("version", ["1.31", "1.33", "1.37"])  # new expressions have the library from 1.31
@pytest.mark.parametrize(("expr", "error"), [
    ("cidr('10.0.0.0/8').containsIP('x')", "no such overload"),
    ("cidr('10.0.0.0/8').containsCIDR('x')", CIDR_TWICE + "netip.ParsePrefix(\"x\"): no '/'"),
    ("cidr('10.0.0.0/8').containsCIDR('10.0.0.0/08')",
     CIDR_TWICE + 'netip.ParsePrefix("10.0.0.0/08"): bad bits after slash: "08"'),
])  # fmt: skip
def test_a_bad_string_given_to_a_cidrs_containment_fails_as_the_api_server_has_it(
    version: str, expr: str, error: str
) -> None:
    """Issue 45: cidrContainsIPString converts first and passes the CIDR, not the conversion's error, to
    MaybeNoSuchOverloadErr (`no such overload`); cidrContainsCIDRString's error is `cidr()`'s own, its prefix twice
    (apiserver pkg/cel/library/cidr.go)."""
    program = kcel.Env(k8s_version=version).compile(expr)
    for run in (program.evaluate, program.evaluate_with_cost):
        with pytest.raises(kcel.EvalError) as raised:
            run({})
        assert str(raised.value) == error


@pytest.mark.parametrize("version", [None, "1.30", "1.37"])
@pytest.mark.parametrize(("expr", "expected"), [
    ("self.?spec.?enabled == optional.of(true)", False),  # 1 is no bool
    ("optional.of(n) == optional.of(n)", False),  # NaN equals nothing, in an optional too
    ("optional.of(n) != optional.of(n)", True),
    ("[optional.of(n)] == [optional.of(n)]", False),
    ("dyn(optional.of(1)) == dyn(optional.of(1.0))", True),  # numbers by value
    ("optional.none() == optional.none()", True),
    ("optional.of(1) == optional.none()", False),
])  # fmt: skip
def test_optionals_are_equal_by_cels_equality_of_what_they_hold(version: str | None, expr: str, expected: bool) -> None:
    """Issue 45: cel-go's Optional.Equal compares the values with CEL's equality; kcel compared them with Python's
    `==` (1 == True, and a NaN equal to itself)."""
    env = kcel.Env(variables={"self": "dyn", "n": "double"}, k8s_version=version, environment="stored")
    program = env.compile(expr)
    activation = {"self": {"spec": {"enabled": 1}}, "n": float("nan")}
    assert program.evaluate(activation) is expected
    assert program.evaluate_with_cost(activation)[0] is expected


@pytest.mark.parametrize("version", [None, "1.30", "1.37"])
@pytest.mark.parametrize(("expr", "error"), [
    ("dyn([1, 2]).join(',')", "no such overload: join(list, string)"),
    ("dyn([1, 2]).join()", "no such overload: join(list)"),
    ("dyn(mixed).join(',')", "join: invalid input: 1"),  # the guard looks at the first element only
])  # fmt: skip
def test_join_of_a_list_whose_first_element_is_no_string_finds_no_overload(
    version: str | None, expr: str, error: str
) -> None:
    """Issue 45: cel-go's runtime type guard of `list(string)` (IsAssignableRuntimeType) checks the first element;
    kcel reached join's own `join: invalid input: 1`."""
    program = kcel.Env(variables={"mixed": "list(dyn)"}, k8s_version=version).compile(expr)
    for run in (program.evaluate, program.evaluate_with_cost):
        with pytest.raises(kcel.EvalError) as raised:
            run({"mixed": ["a", 1]})
        assert str(raised.value) == error


@pytest.mark.parametrize("version", [None, "1.37"])
def test_a_bad_literal_pattern_fails_the_program_inside_an_operand_folded_away(version: str | None) -> None:
    """Issue 45: cel-go plans `x in []`'s operand before folding the call to false, and planning compiles the
    literal pattern: the program fails (`invalid repeat count`) as the same call alone does. kcel answered false."""
    env = kcel.Env(variables={"t": "string"}, k8s_version=version)
    with pytest.raises(kcel.CelError) as alone:
        env.compile('dyn(matches(t, "a{2,1}"))')
    with pytest.raises(type(alone.value)) as folded:
        env.compile('dyn(matches(t, "a{2,1}")) in []')
    assert "invalid repeat count" in str(folded.value) and str(folded.value) == str(alone.value)
    assert env.compile('dyn(matches(t, "a{2}")) in []').evaluate({"t": "a"}) is False


@pytest.mark.parametrize(("version", "declared"), [("1.30", True), ("1.33", True), ("1.34", False), ("1.37", False)])
def test_duration_of_an_int_type_checks_before_cel_go_v0_26_and_fails_when_evaluated(
    version: str, declared: bool
) -> None:
    """Issue 45: cel-go up to v0.23 (Kubernetes 1.33) declared `int64_to_duration`, bound to Int.ConvertToType, which
    has no duration case; v0.26 (1.34) no longer declares it."""
    env = kcel.Env(variables={"x": "int"}, k8s_version=version)
    if not declared:
        with pytest.raises(kcel.CompileError, match="found no matching overload for 'duration' applied to '\\(int\\)'"):
            env.compile("duration(x)")
        return
    program = env.compile("duration(x)")
    for run in (program.evaluate, program.evaluate_with_cost):
        with pytest.raises(kcel.EvalError, match="^type conversion error from 'int' to 'google.protobuf.Duration'$"):
            run({"x": 1})
    assert env.compile("duration(x) > duration('1s') || true").evaluate({"x": 1}) is True


@pytest.mark.parametrize(("expr", "optimized", "unoptimized"), [
    ("cel.bind(t, true, t)", 1, 11),
    ("cel.bind(t, [1, 2], t)", 1, 21),
    ("cel.bind(a, 1, cel.bind(b, a + 1, [a, b]))", 14, 34),
    ("optional.of(1).optMap(x, [x])", 16, 26),
    ("optional.of(1).optFlatMap(x, optional.of(x))", 6, 16),
    ("optional.none().optMap(x, [x])", 3, 3),  # the bind is not reached
    ("cel.bind(v, [], 1)", 0, 10),  # an empty list bound and not read is not built
    ("cel.bind(v, [], v)", 1, 21),
    ("cel.bind(v, [], [v, v])", 12, 32),  # built once, when first read
])  # fmt: skip
def test_a_bind_builds_its_empty_loop_range_unless_optimized(expr: str, optimized: int, unoptimized: int) -> None:
    """Issue 45: `cel.bind` (and optMap's and optFlatMap's expansion through it) is a comprehension over an empty list
    literal; without OptOptimize (cel-go's conformance runner, `kcel.Env(optimize=False)`) cel-go builds that list
    and charges it 10, as any list literal. Answers of cel-go v0.29.2."""
    assert kcel.Env().compile(expr).evaluate_with_cost({})[1] == optimized
    assert kcel.Env(optimize=False).compile(expr).evaluate_with_cost({})[1] == unoptimized


_AT_EOF = (
    "mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, "
    "NUM_UINT, STRING, BYTES, IDENTIFIER}"
)


@pytest.mark.parametrize(("expr", "errors"), [
    ('0x', ["1:2: extraneous input 'x' expecting <EOF>"]),
    ("'\\z'", ["1:1: token recognition error at: ''\\z'", "1:4: token recognition error at: '''", "1:5: " + _AT_EOF]),
    ("'\\x4'", ["1:1: token recognition error at: ''\\x4''", "1:6: " + _AT_EOF]),
    ("'\\u12'", ["1:1: token recognition error at: ''\\u12''", "1:7: " + _AT_EOF]),
    ("'\\07'", ["1:1: token recognition error at: ''\\07''", "1:6: " + _AT_EOF]),
    ("b'\\777'", [
        "1:2: token recognition error at: ''\\7'",
        "1:5: extraneous input '77' expecting <EOF>",
        "1:7: token recognition error at: '''",
    ]),
    ('1.5.5', ["1:4: extraneous input '.5' expecting <EOF>"]),
    ("rb'\\n'", ["1:3: extraneous input ''\\n'' expecting <EOF>"]),
    ("request.user = 'test'", [
        "1:14: token recognition error at: '= '",
        "1:16: extraneous input ''test'' expecting <EOF>",
    ]),
    ('(1 2) + (3 4)', ["1:4: extraneous input '2' expecting ')'", "1:12: extraneous input '4' expecting ')'"]),
    ('[1 2 3]', ["1:4: mismatched input '2' expecting {']', ','}"]),
    ('a[1 2]', ["1:5: extraneous input '2' expecting ']'"]),
    ('{1: 2 3}', ["1:7: extraneous input '3' expecting {'}', ','}"]),
    ('{1 2: 3}', ["1:4: extraneous input '2' expecting ':'"]),
    ('a # b', ["1:3: token recognition error at: '#'", "1:5: extraneous input 'b' expecting <EOF>"]),
    ("'''\\z'''", [
        "1:3: token recognition error at: ''\\z'",
        "1:6: extraneous input '''' expecting <EOF>",
        "1:8: token recognition error at: '''",
    ]),
    ('x !y', ["1:3: mismatched input '!' expecting <EOF>"]),
    ("== 1", ["1:1: extraneous input '==' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, "
              "NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"]),
    ("a in [[1, 2]", ["1:13: mismatched input '<EOF>' expecting {']', ','}"]),
    ("[1, 2,", ["1:7: missing ']' at '<EOF>'"]),
    ("f(a", ["1:4: missing ')' at '<EOF>'"]),
    ("((a", ["1:4: mismatched input '<EOF>' expecting ')'"]),
    ("a ? b c", ["1:7: missing ':' at 'c'"]),
    ("{a 1, b: 2}", ["1:4: missing ':' at '1'"]),
    ("a ? b c d", ["1:7: missing ':' at 'c'", "1:9: extraneous input 'd' expecting <EOF>"]),
    ("a b '\\z' #", [  # the lexer skips the bad literal: the end follows `b`
        "1:3: extraneous input 'b' expecting <EOF>",
        "1:5: token recognition error at: ''\\z'",
        "1:8: token recognition error at: '' #'",
    ]),
    ("a b c # d", ["1:3: mismatched input 'b' expecting <EOF>", "1:7: token recognition error at: '#'"]),
    ("a + !", ["1:6: extraneous input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
               "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"]),
])  # fmt: skip
def test_syntax_errors_as_antlr_recovers(expr: str, errors: list[str]) -> None:
    """Issue 45: ANTLR's lexer rejects a bad escape or a lone `=`, `&`, `|` (having read the next character) and lexes
    on past it; its parser expects, after a complete operand, what the open construct needs (`<EOF>`, `')'`,
    `{']', ','}`...) and deletes a token the next one would fit after. Every error is reported, in source order
    (each one's "Syntax error: " left out here).
    Answers of cel-go v0.29.2 (the same at Kubernetes 1.30 and 1.33)."""
    with pytest.raises(kcel.CompileError) as info:
        kcel.parse(expr)
    lines = [line for line in str(info.value).split("\n") if line.startswith("ERROR:")]
    heads = [line.removeprefix("ERROR: <input>:").replace("Syntax error: ", "") for line in lines]
    assert heads == errors


@pytest.mark.parametrize(("version", "estimate"), [("1.30", (3, 1844674407370955266)), ("1.33", (3, 3)),
                                                   ("1.37", (3, 3))])  # fmt: skip
def test_an_optional_of_a_scalar_has_a_size_from_cel_go_v0_23(version: str, estimate: tuple[int, int]) -> None:
    """Issue 45: cel-go's isScalar counts `optional_type(int)` as a scalar (size 1) since v0.23 (Kubernetes 1.33);
    before, the size of `optional.of(1)` is unknown and `==` of two is priced by it."""
    env = kcel.Env(k8s_version=version)
    assert env.estimate_cost(env.compile("optional.of(1) == optional.of(2)")) == kcel.CostEstimate(*estimate)


@pytest.mark.parametrize("version", ["1.30", "1.33", "1.37"])
@pytest.mark.parametrize(("expr", "error"), [
    ("'%s'.format([[1u, 2.0]])", None),  # reached from format() through literals: exempt at every version
    ("'%s'.format([dyn([1u, 2.0])])", "1:23: expected type 'uint' but found 'double'"),
    ("'%s'.format([dyn([[1u], [2.0]])])", "1:25: expected type 'list(uint)' but found 'list(double)'"),
    ("'%s'.format([dyn({1u: 1, 2.0: 1})])", "1:26: expected type 'uint' but found 'double'"),
])  # fmt: skip
def test_a_call_between_format_and_a_mixed_literal_ends_the_exemption_before_cel_go_v0_18(
    version: str, expr: str, error: str | None
) -> None:
    """Issue 45: cel-go v0.17.8's inExemptFunction (Kubernetes 1.30) climbs from a literal through list and map
    parents only; from v0.18 it climbs through every ancestor. Answers of the 1.30, 1.33 and 1.37 references."""
    env = kcel.Env(k8s_version=version)
    if error is None or version != "1.30":
        env.compile(expr)
        return
    with pytest.raises(kcel.CompileError) as info:
        env.compile(expr)
    assert str(info.value).splitlines()[0] == f"ERROR: <input>:{error}"


@pytest.mark.parametrize(("expr", "before_v0_29", "since"), [
    ("true ? optional.of(optional.of(1)) : optional.none()", kcel.Optional(1), kcel.Optional(kcel.Optional(1))),
    ("true ? optional.of(optional.none()) : optional.none()", kcel.Optional(None), kcel.Optional(kcel.Optional())),
    ("true ? optional.of(type(1)) : optional.none()", kcel.Optional("int"), kcel.Optional(kcel.TypeValue("int"))),
    ("optional.of(1).optMap(x, optional.of(x))", kcel.Optional(1), kcel.Optional(kcel.Optional(1))),
    ("optional.of(optional.of(1)).optMap(x, x)", kcel.Optional(1), kcel.Optional(kcel.Optional(1))),
    ("true ? optional.of([optional.of(1)]) : optional.none()", kcel.Optional([kcel.Optional(1)]),
     kcel.Optional([kcel.Optional(1)])),  # only the optional itself goes through Go values
])  # fmt: skip
def test_a_conditional_optional_result_goes_through_go_values_before_cel_go_v0_29(
    expr: str, before_v0_29: object, since: object
) -> None:
    """Issue 45: cel-go plans `?:` as a conditional attribute, whose applyQualifiers took an optional's value as
    `GetValue().Value()` (a Go value) and wrapped `NativeToValue` of it again: nested optionals collapsed, an empty
    one inside became null, a type its name. Fixed in cel-go 924f6d51 (v0.29); optMap expands to a `?:`. Answers of
    the 1.33 and 1.37 references (1.30's are the same values)."""
    for version in ("1.30", "1.33"):
        assert kcel.Env(k8s_version=version).compile(expr).evaluate({}) == before_v0_29
    assert kcel.Env(k8s_version="1.37").compile(expr).evaluate({}) == since
    assert kcel.Env().compile(expr).evaluate({}) == since


@pytest.mark.parametrize(("expr", "value", "error"), [
    ("'\\uDFFF'", "\ufffd", "invalid unicode code point"),
    ("'\\U0000D800' == '\\uFFFD'", True, "invalid unicode code point"),
    ("'''\\ud800x'''.size()", 2, "invalid unicode code point"),
    ("'\\U00110000'", None, "invalid unicode code point"),
])  # fmt: skip
def test_a_surrogate_escape_is_the_replacement_character_before_cel_go_v0_23(
    expr: str, value: object, error: str
) -> None:
    """Issue 45: cel-go before v0.23 (Kubernetes 1.30-1.32) decoded a surrogate's escape as Go encodes an invalid
    rune, U+FFFD, and rejected only one past U+10FFFF (`unable to unescape string`); v0.23 rejects both as invalid
    code points. Answers of the 1.30, 1.33 and 1.37 references."""
    old = kcel.Env(k8s_version="1.30")
    if value is None:
        with pytest.raises(kcel.CompileError, match="1:1: unable to unescape string"):
            old.compile(expr)
    else:
        assert old.compile(expr).evaluate({}) == value
    for env in (kcel.Env(k8s_version="1.33"), kcel.Env(k8s_version="1.37"), kcel.Env()):
        with pytest.raises(kcel.CompileError, match=f"1:1: {error}"):
            env.compile(expr)
