"""Plans the CEL nodes that need Python statements, not just an expression (part of stage 3, `plan`).

`kcel.eval.codegen` turns most nodes into one Python expression; the ones here first write
statements and then stand for a temporary: `&&`/`||` and `@not_strictly_false` (which catch an
operand's error as a value), `?:`, optional `or`/`orValue`, comprehensions (the macros' loops),
and the local variables of `cel.bind` and `cel.@block`. Each function takes the planner (`cg`, a
`kcel.eval.codegen.CodeGen`) and writes through it, so the two modules share one writer and scope stack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kcel.checker.types import BOOL, CelType
from kcel.eval.writer import Writer
from kcel.parser.ast import Call, Comprehension, Const, CreateList, Expr, Ident, Select


@dataclass
class Local:
    """A CEL variable bound by a comprehension, `cel.bind` or `cel.@block`, and the Python name holding it."""

    py: str
    may_hold_error: bool = False  # an `all`/`exists` accumulator holding an error a later step may absorb
    lazy: bool = False  # a `_Lazy` cell, evaluated on first use


class Planner(Protocol):
    """What these functions use of the code generator planning the expression (`CodeGen`)."""

    w: Writer
    scopes: list[dict[str, Local]]
    metered: bool  # counting cost as it runs
    traced: bool  # reporting each node's value to a tracer
    optimize: bool  # constant literals are folded (cel-go's OptOptimize)
    pending: int  # static cost not yet written out
    captures: int  # `try` blocks of `capture` around the code being generated
    exact_failures: bool  # charging every step as cel-go does, for the cost of a failure
    loops: int  # comprehension loops around the code being generated
    lenient_optional_or: bool  # cel-go before v0.28: a non-optional left side of `or`/`orValue` is the answer
    optionals_through_go: bool  # cel-go before v0.29: a conditional's optional result goes through Go values
    types: Mapping[int, CelType]
    eager_binds: bool  # cel-go before v0.22: a bind's initialiser runs first, used or not (an error kept for use)
    decls: Any  # the environment's declarations (kcel.eval.codegen.Declarations)
    namespace: dict[str, Any]  # the names the generated code sees
    resolved_attribute: int | None  # the node of the attribute being resolved (not evaluated), if any
    uncharged: int  # > 0 while generating what cel-go evaluates without charging
    inline: bool  # schema fields may be read in place
    subscripts: bool  # `Program.evaluate`'s variant, which runs the exact one upon any error: nothing to absorb
    chosen: Any  # node id -> the overload ids the checker left possible
    presence: str  # the extra argument of presence tests (`, True` when a bad one is an error)
    preamble: list[str]  # statements at the start of the function, after reading the variables
    held: dict[Expr, str]  # the fast variant's reads of the input already in a temporary here

    def gen(self, node: Expr, tolerant: bool = False) -> str: ...
    def resolved(self, node: Expr, tolerant: bool = False) -> str: ...
    def flush(self) -> None: ...
    def temp(self, prefix: str = "_t") -> str: ...
    def cost(self, amount: int) -> None: ...
    def lookup(self, name: str) -> Local | None: ...
    def constant(self, node: Expr) -> tuple[bool, Any]: ...
    def plans_as_attribute(self, node: Expr) -> bool: ...
    def qualifier_cost(self, node: Expr, operand: Expr) -> int: ...
    def cannot_fail(self, node: Expr) -> bool: ...
    def read_from_input(self, node: Expr) -> bool: ...
    def bind(self, value: Any, prefix: str = "_k") -> str: ...
    def deep(self) -> bool: ...
    def spill(self, text: str) -> str: ...
    def gen_args(self, nodes: Sequence[Expr], free: Expr | None = None) -> list[str]: ...
    def schema_field(self, operand: Expr, field: str) -> Any: ...
    def holder(self, operand: str) -> tuple[str, str]: ...
    def plain(self, access: Any) -> str: ...
    def is_optional(self, node: Expr) -> bool: ...
    def opaque(self, node: Expr, operand: str) -> str: ...


# -- errors as values, branches ---------------------------------------------------------------


def capture(cg: Planner, node: Expr, into: str, resolved: bool = False) -> None:
    """`into = <node>`, with any CEL error caught and stored as a value; `resolved`: an attribute cel-go resolves
    (`Planner.resolved`)."""
    cg.flush()
    cg.w.line("try:")
    cg.captures += 1
    with cg.w.indent():
        text = cg.resolved(node, tolerant=True) if resolved else cg.gen(node, tolerant=True)
        cg.flush()
        cg.w.line(f"{into} = {text}")
    cg.captures -= 1
    cg.w.line("except _EvaluationStopped:")  # never absorbed: the evaluation is cancelled
    with cg.w.indent():
        cg.w.line("raise")
    cg.w.line("except _CEL_ERRORS as _e:")
    with cg.w.indent():
        cg.w.line(f"{into} = _e")
        if cg.metered and not cg.exact_failures:  # what it charged up front may not all have run: ask the exact plan
            cg.w.line("_m.absorbed = True")


def literal_elements(cg: Planner, nodes: Sequence[Expr], base_cost: int) -> list[str]:
    """A literal's elements when failures are exact: cel-go charges a list, map or message literal whose element
    failed all the same (its constructor is observed whatever the elements gave)."""
    cg.flush()
    cg.w.line("try:")
    cg.captures += 1
    with cg.w.indent():
        texts = cg.gen_args(nodes)  # each a name: with exact failures every node is spilled
        cg.flush()
        cg.w.line("pass")
    cg.captures -= 1
    cg.w.line("except _EvaluationStopped:")
    cg.w.line("    raise")
    cg.w.line("except _CEL_ERRORS:")
    cg.w.line(f"    _m.add({base_cost})")
    cg.w.line("    raise")
    return texts


def costed_operands(cg: Planner, nodes: Sequence[Expr], cost: Any) -> list[str]:
    """Operands of a metered call whose cost depends on them (`cost(args, result)`, None for 1).

    cel-go evaluates every operand of a unary or binary call and charges the call even when one
    failed (an error's size counts as 1); its calls of three or more arguments stop at the first
    failure, and are charged only when that was the last argument (its tracker finds every argument
    observed). So each operand that can fail is captured, and a failure charged.
    """
    leading = nodes[:-1] if len(nodes) > 2 else ()  # their failure stops the call uncharged
    if not cg.metered or all(cg.cannot_fail(n) for n in nodes[len(leading) :]) or cg.deep():
        return cg.gen_args(nodes)
    names = [t if t.isidentifier() else cg.spill(t) for t in cg.gen_args(leading)]  # evaluated in order
    captured = []
    for node in nodes[len(leading) :]:
        if cg.cannot_fail(node):
            names.append(cg.gen(node))
            continue
        name = cg.temp()
        capture(cg, node, name)
        names.append(name)
        captured.append(name)
    failed = " or ".join(f"isinstance({n}, BaseException)" for n in captured)
    cg.flush()  # the operands that cannot fail were read all the same
    cg.w.line(f"if {failed}: _operand_failed(_m, {cg.bind(cost, '_cost')}, ({', '.join(names)},))")
    return names


def charged_on_failure(cg: Planner, node: Expr, charged: int, resolved: bool = False) -> str:
    """`node`, when failures are exact, where cel-go observes (and `charged`) a step that depends on it even when it
    failed: the relative attribute on an operand (`f(x).a`, `[e][0]`), the qualifier of a computed key."""
    into = cg.temp()
    capture(cg, node, into, resolved)
    cg.w.line(f"if isinstance({into}, BaseException):")
    cg.w.line(f"    _m.add({charged})" if charged else "    pass")
    cg.w.line(f"    raise {into}")
    return into


def presence_test(cg: Planner, node: Select) -> str:
    """`has(x.f)`. Resolved rather than evaluated (a `?:` branch, a key), the test is neither charged nor refunded;
    but the branches of a `?:` operand are resolved uncharged, and its qualifier `.f` is charged here. On an optional
    (`has(x.?a.b)`) the tested qualifier counts only when it finds the field."""
    unevaluated = node.id == cg.resolved_attribute
    presence = int(is_conditional(node.operand)) if unevaluated else cg.decls.presence_test_cost
    operand = cg.opaque(node.operand, presence_test_operand(cg, node, presence))
    access = cg.schema_field(node.operand, node.field)
    if access is None:
        test = f"_has_field({operand}, {node.field!r}{cg.presence})"
    elif access.key is None or not cg.inline:
        test = f"{cg.bind(access.test, '_has')}({operand})"
    else:
        holder, bound = cg.holder(operand)
        found = f"{bound}.__class__ is dict and {holder}.get({access.key!r}).__class__ is {cg.plain(access)}"
        if cg.subscripts:  # anything without `get` is an AttributeError there, which runs the exact variant
            found = f"{bound}.get({access.key!r}).__class__ is {cg.plain(access)}"
        test = f"({found} or {cg.bind(access.test, '_has')}({holder}))"
    if cg.metered and not cg.uncharged and cg.is_optional(node.operand):
        cg.pending -= 1  # the qualifier's unit, charged by the helper instead
        from kcel.eval import metered

        cg.namespace.setdefault("_metered", metered)
        return f"_metered.charged_if_found(_m, {test})"
    return test


def presence_test_operand(cg: Planner, node: Select, presence: int) -> str:
    """The operand of `has(x.f)`, and the test charged: the qualifiers (a chain's base name is free), and `presence`
    (Kubernetes sets PresenceTestHasCost(false): 0). When failures are exact, cel-go observes the test though its
    operand failed: `presence`, where kcel charged an attribute operand its own unit already, for the qualifier of
    the test that never ran."""
    attribute = cg.plans_as_attribute(node.operand)
    operand = node.operand
    if cg.exact_failures and not cg.deep() and not isinstance(operand, Ident) and not is_conditional(operand):
        text = charged_on_failure(cg, operand, presence - attribute)
    else:
        text = cg.gen(operand)
    cg.cost((0 if attribute else 1) + presence)
    return text


def is_conditional(node: Expr) -> bool:
    return isinstance(node, Call) and node.function == "_?_:_"


def computed_key(cg: Planner, node: Call, operand: str) -> tuple[str, str]:
    """`m[f(x)]`, `m[k]` when failures are exact: the key is a qualifier cel-go observes even when computing it
    failed (an optional one only when something is found); a key that is an attribute is resolved."""
    operand = cg.spill(operand)
    charged = cg.qualifier_cost(node, node.args[0]) - (node.function == "_[?_]")
    key = node.args[1]
    return operand, charged_on_failure(cg, key, charged, resolved=resolved_key(cg, key))


def resolved_key(cg: Planner, key: Expr) -> bool:
    """Whether cel-go makes an index a qualifier it resolves (not evaluates): an attribute (a name, a selection, an
    index, `?:`) or a presence test, whose own step is then not charged."""
    return not isinstance(key, Const) and (cg.plans_as_attribute(key) or (isinstance(key, Select) and key.test_only))


def logic(cg: Planner, node: Call, tolerant: bool) -> str:
    """`&&`/`||`: short-circuit, and an error on one side loses to a deciding other side."""
    if cg.subscripts and always_bool(cg, node.args[0]) and always_bool(cg, node.args[1]):
        return _python_logic(cg, node)
    decisive = "False" if node.function == "_&&_" else "True"
    other = "True" if decisive == "False" else "False"
    left, right, result = cg.temp(), cg.temp(), cg.temp()
    capture(cg, node.args[0], left)
    cg.w.line(f"if {left} is {decisive}:")
    with cg.w.indent():
        cg.w.line(f"{result} = {decisive}")
    cg.w.line("else:")
    with cg.w.indent():
        capture(cg, node.args[1], right)
        cg.w.line(f"if {right} is {decisive} or ({left} is {other} and {right} is {other}):")
        with cg.w.indent():
            cg.w.line(f"{result} = {right}")
        cg.w.line("else:")
        with cg.w.indent():
            cg.w.line(f"{result} = _logic_error({left}, {right})")
    if not tolerant:
        cg.w.line(f"if {result} is not True and {result} is not False:")
        with cg.w.indent():
            cg.w.line(f"raise {result}")
    return result


def _python_logic(cg: Planner, node: Call) -> str:
    """`&&`/`||` of two bools in `Program.evaluate`'s variant, where an error sends the evaluation to the exact
    variant (which absorbs it as cel-go does): Python's own operator, or, when the right side needs statements, an
    `if` that runs them only when the left side did not decide.

    Each side is planned once: planning the sides again inside `try` blocks when the right one needed statements
    (as this once did) planned a balanced chain's lower levels four times more at each level up, which made 1,000
    terms take seconds.
    """
    left = cg.gen(node.args[0])
    after_left = cg.w.mark()
    right = cg.gen(node.args[1])
    if cg.w.mark() == after_left:
        return f"({left} {'and' if node.function == '_&&_' else 'or'} {right})"
    statements = cg.w.cut(after_left)
    result = cg.temp()
    cg.w.line(f"{result} = {left}")
    cg.w.line(f"if {result} is {'True' if node.function == '_&&_' else 'False'}:")
    cg.w.nest(statements)
    with cg.w.indent():
        cg.w.line(f"{result} = {right}")
    return result


def not_strictly_false(cg: Planner, operand: Expr) -> str:
    """The loop condition of `all`/`exists`: true unless the operand is `false` (an error keeps looping)."""
    local = cg.lookup(operand.name) if isinstance(operand, Ident) else None
    if local is not None and not local.lazy:
        cg.cost(2)
        return f"({local.py} is not False)"
    if isinstance(operand, Call) and operand.function == "!_" and isinstance(operand.args[0], Ident):
        inner = cg.lookup(operand.args[0].name)
        if inner is not None and not inner.lazy:
            cg.cost(3)
            return f"({inner.py} is not True)"
    value = cg.temp()
    capture(cg, operand, value)
    cg.cost(1)
    return f"({value} is not False)"


def conditional(cg: Planner, node: Call, tolerant: bool) -> str:
    """`c ? a : b` as an `if` statement; only the chosen branch is evaluated."""
    cond, then, other = node.args
    held = _hold_tested_object(cg, cond)
    test = cg.gen(cond)
    result = cg.temp()
    cg.flush()
    cg.w.line(f"if {_bool_test(cg, cond, test)}:")
    with cg.w.indent():
        cg.w.line(f"{result} = {_branch(cg, then, tolerant)}")
        cg.flush()
    cg.w.line("else:")
    with cg.w.indent():
        cg.w.line(f"{result} = {_branch(cg, other, tolerant)}")
        cg.flush()
    if held is not None:
        del cg.held[held]
    if cg.optionals_through_go and _may_be_optional(cg, node):
        cg.w.line(f"{result} = _through_go({result})")
    return result


def _may_be_optional(cg: Planner, node: Expr) -> bool:
    t = cg.types.get(node.id)
    return t is None or t.name in ("optional_type", "dyn")


def _hold_tested_object(cg: Planner, cond: Expr) -> Expr | None:
    """In the fast variant, the object `has(x.y.f) ? x.y.f.g : ...` tests, read once before the test, for the test
    and the branches (where it is known again): a read that fails would fail the test, and runs the exact variant."""
    if not (cg.subscripts and isinstance(cond, Select) and cond.test_only):
        return None
    target = cond.operand
    if not isinstance(target, Select) or target in cg.held or not cg.read_from_input(target):
        return None
    value = cg.gen(target)
    cg.flush()
    cg.held[target] = held = cg.temp("_h")
    cg.w.line(f"{held} = {value}")
    return target


_BOOL_RESULTS = frozenset({"_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in", "!_", "_&&_", "_||_"})


def _bool_test(cg: Planner, node: Expr, test: str) -> str:
    """`test` as the condition of an `if`: a bool as it is, anything else `no such overload` (tested after the
    bools, without a call)."""
    if always_bool(cg, node):
        return test
    value = cg.temp("_b")
    return f"(({value} := {test}) is True or ({value} is not False and _conditional_test({value})))"


def always_bool(cg: Planner, node: Expr) -> bool:
    """A presence test or an operator whose result is a bool or an error, never another value: `?:` need not test
    it is a bool. In `Program.evaluate`'s variant, also a library function all of whose overloads the checker left
    possible return bools (`startsWith`, `matches`...): there, what they raise goes to the exact variant."""
    if (isinstance(node, Select) and node.test_only) or (isinstance(node, Call) and node.function in _BOOL_RESULTS):
        return True
    if read_class(cg, node) is bool:
        return True
    chosen = cg.chosen.get(node.id) if cg.subscripts and isinstance(node, Call) else None
    if not chosen:
        return False
    assert isinstance(node, Call)
    overloads = [o for o in cg.decls.overloads(node.function) if o.id in chosen]
    return len(overloads) == len(chosen) and all(o.result == BOOL for o in overloads)


def read_class(cg: Planner, node: Expr) -> type | None:
    """In `Program.evaluate`'s variant, the class every read of a schema's scalar field gives (a str, an int, a bool:
    anything else in the data fails the read, which runs the exact variant); None for any other node."""
    if not cg.subscripts or not isinstance(node, Select) or node.test_only or cg.is_optional(node.operand):
        return None
    access = cg.schema_field(node.operand, node.field)
    return access.plain if access is not None and access.key is not None else None


def _branch(cg: Planner, node: Expr, tolerant: bool) -> str:
    """A branch of `?:`; cel-go resolves an attribute branch (`m`, `m.a`, `[2][3]`) without evaluating it, so the
    attribute itself is not charged, only its qualifiers."""
    presence_test = isinstance(node, Select) and node.test_only  # an attribute too (cel-go's evalTestOnly)
    if presence_test or (cg.plans_as_attribute(node) and not is_conditional(node)):
        text = cg.resolved(node, tolerant)
    else:
        text = cg.gen(node, tolerant)
    cg.flush()
    return text


def optional_or(cg: Planner, node: Call) -> str:
    """`a.or(b)` / `a.orValue(b)`: `b` is evaluated only when the optional `a` is empty.

    cel-go's evalOptionalOr/evalOptionalOrValue (cel/library.go, since v0.28): an `a` that is not an optional
    is `no such overload` and `b` is not evaluated; whatever `b` gives is the result, optional or not. Before
    v0.28 (`lenient_optional_or`: Kubernetes up to 1.36) such an `a` was the result, unchanged."""
    assert node.target is not None
    target = cg.gen(node.target)
    result = cg.temp()
    cg.flush()
    cg.w.line(f"{result} = {target}")
    cg.w.line(f"if _optional_missing({result}{', True' if cg.lenient_optional_or else ''}):")
    with cg.w.indent():
        other = cg.gen(node.args[0])
        cg.flush()
        cg.w.line(f"{result} = {other}")
    if node.function == "orValue":
        cg.w.line("else:")
        with cg.w.indent():
            value = f"_optional_value({result})" if cg.lenient_optional_or else f"{result}.value"
            cg.w.line(f"{result} = {value}")
    return result


# -- comprehensions and local variables ----------------------------------------------------


def comprehension(cg: Planner, node: Comprehension, tolerant: bool) -> str:
    """A macro's loop as a Python `for` over the range, its accumulator in a temporary."""
    if _is_bind(node):
        return _bind_like(cg, node, tolerant)
    iter_range = cg.gen(node.iter_range)
    exact = cg.exact_failures and not cg.deep()  # each step as cel-go's evalFold runs it
    accu = Local(cg.temp("_a"), may_hold_error=exact or _steps_tolerantly(node))
    cg.flush()
    # An accumulator built by appending starts as a fresh list the loop may mutate.
    appending = _appended_element(node) is not None and not exact
    init = "[]" if appending else cg.gen(node.accu_init)
    if appending:
        cg.cost(0 if cg.optimize else 10)
    cg.flush()
    cg.w.line(f"{accu.py} = {init}")
    loop_vars = {node.iter_var: Local(cg.temp("_l"))}
    if node.iter_var2:
        loop_vars[node.iter_var2] = Local(cg.temp("_l"))
        names = ", ".join(local.py for local in loop_vars.values())
        cg.w.line(f"for {names} in _iterate_pairs({iter_range}):")
    else:
        elements = f"_iterate({iter_range})"
        if cg.subscripts:  # a list is iterated as it is, without a call
            held = cg.temp("_r")
            elements = f"({held} if ({held} := {iter_range}).__class__ is list else _iterate({held}))"
        cg.w.line(f"for {loop_vars[node.iter_var].py} in {elements}:")
    cg.scopes.append({**loop_vars, node.accu_var: accu})
    cg.loops += 1
    with cg.w.indent():
        if cg.traced:
            cg.w.line(f"_m.step({node.id}, ({', '.join(local.py for local in loop_vars.values())},))")
        quantifier = None if cg.metered or cg.traced else _quantifier(node)
        if quantifier is not None:
            _quantifier_body(cg, quantifier, accu)
        elif exact:
            _exact_loop_body(cg, node, accu)
        else:
            _loop_body(cg, node, accu)
    cg.loops -= 1
    cg.scopes.pop()
    cg.scopes.append({node.accu_var: accu})
    result = cg.gen(node.result, tolerant)
    cg.scopes.pop()
    return result


def _loop_body(cg: Planner, node: Comprehension, accu: Local) -> None:
    """One iteration: stop when the loop condition fails, else step the accumulator."""
    if not (isinstance(node.loop_condition, Const) and node.loop_condition.value is True):
        condition = cg.gen(node.loop_condition)
        cg.flush()
        cg.w.line(f"if not {condition}:")
        with cg.w.indent():
            cg.w.line("break")
    appended = _appended_element(node)
    if appended is not None:
        guard, element = appended
        _loop_append(cg, accu, guard, element)
        return
    step = cg.gen(node.loop_step, tolerant=accu.may_hold_error)
    cg.flush()
    cg.w.line(f"{accu.py} = {step}")
    if cg.metered:
        cg.w.line("_m.add(0)")


def _exact_loop_body(cg: Planner, node: Comprehension, accu: Local) -> None:
    """One iteration as cel-go's evalFold runs it, for the exact cost of a failure: a failed step leaves an error in
    the accumulator and the loop goes on (a condition that is not a bool does not stop it); the result reports it."""
    if not (isinstance(node.loop_condition, Const) and node.loop_condition.value is True):
        condition = cg.temp()
        capture(cg, node.loop_condition, condition)
        cg.w.line(f"if {condition} is False:")
        with cg.w.indent():
            cg.w.line("break")
    capture(cg, node.loop_step, accu.py)


def _quantifier_body(cg: Planner, quantifier: tuple[bool, Expr], accu: Local) -> None:
    """One step of `all` (`deciding` False) or `exists` (True) without the accumulator's `&&`/`||`: an element
    that decides ends the loop; the first error (or non-bool) is kept, and a deciding element still wins over it."""
    deciding, predicate = quantifier
    if cg.subscripts and always_bool(cg, predicate):  # a bool, or an error: the exact variant then answers
        test = cg.gen(predicate)
        cg.flush()
        cg.w.line(f"if {test}:" if deciding else f"if not {test}:")
        with cg.w.indent():
            cg.w.line(f"{accu.py} = {deciding}")
            cg.w.line("break")
        accu.may_hold_error = False
        return
    value = cg.temp()
    capture(cg, predicate, value)
    cg.w.line(f"if {value} is {not deciding}:")
    with cg.w.indent():
        cg.w.line("continue")
    cg.w.line(f"if {value} is {deciding}:")
    with cg.w.indent():
        cg.w.line(f"{accu.py} = {deciding}")
        cg.w.line("break")
    cg.w.line(f"if {accu.py} is {not deciding}:")
    with cg.w.indent():
        cg.w.line(f"{accu.py} = _logic_error({not deciding}, {value})")


def _loop_append(cg: Planner, accu: Local, guard: Expr | None, element: Expr) -> None:
    """`@result + [e]` (map, filter) appends in place: linear, not quadratic."""
    if guard is not None:
        test = cg.gen(guard)
        cg.flush()
        cg.w.line(f"if {_bool_test(cg, guard, test)}:")
        with cg.w.indent():
            _append_element(cg, accu, element)
    else:
        _append_element(cg, accu, element)


def _append_element(cg: Planner, accu: Local, element: Expr) -> None:
    value = cg.gen(element)
    folded = cg.optimize and cg.constant(element)[0]  # `[1.0]` is a constant list, built once for free
    cg.cost(1 + (0 if folded else 10) + 1)  # read @result, the one-element list literal, `+`
    cg.flush()
    cg.w.line(f"{accu.py}.append({value})")


def _bind_like(cg: Planner, node: Comprehension, tolerant: bool) -> str:
    """`cel.bind` and friends: a variable whose initialiser runs on first use, at most once (before cel-go v0.22, at
    once, its error kept for a use). Its loop is over an empty list literal, which cel-go builds, and charges,
    unless OptOptimize folded it."""
    cg.cost(0 if cg.optimize else 10)
    if cg.eager_binds and not cg.deep():
        local = Local(cg.temp("_b"), may_hold_error=True)
        capture(cg, node.accu_init, local.py)
    else:
        local = _lazy_local(cg, node.accu_init)
    cg.scopes.append({node.accu_var: local})
    result = cg.gen(node.result, tolerant)
    cg.scopes.pop()
    return result


def _lazy_local(cg: Planner, init: Expr) -> Local:
    """A local for `init`: a plain temporary when it is a literal that costs nothing (`[]` only when OptOptimize
    folds it; else building it is charged when it is read), else a `_Lazy` cell. A name is read lazily too,
    as cel-go resolves the accumulator on first use: `cel.bind(b, a, 1)` neither reads `a` (a bind of its own, which
    may fail) nor pays for it."""
    if isinstance(init, Const) or (cg.optimize and isinstance(init, CreateList) and not init.elements):
        text = cg.gen(init)
        name = cg.temp("_b")
        cg.flush()
        cg.w.line(f"{name} = {text}")
        return Local(name)
    function, cell = cg.temp("_init"), cg.temp("_cell")
    cg.flush()
    cg.w.line(f"def {function}():")
    with cg.w.indent():
        text = cg.gen(init)
        cg.flush()
        cg.w.line(f"return {text}")
    cg.w.line(f"{cell} = _Lazy({function})")
    return Local(cell, lazy=True)


def block(cg: Planner, node: Call) -> str:
    """`cel.@block([slots], result)`: each slot `@indexN` is a lazy local, as for `cel.bind`."""
    slots, result = node.args
    assert isinstance(slots, CreateList)
    scope: dict[str, Local] = {}
    cg.scopes.append(scope)
    for i, slot in enumerate(slots.elements):
        scope[f"@index{i}"] = _lazy_local(cg, slot)
    text = cg.gen(result)
    cg.scopes.pop()
    return text


# -- recognising macro shapes ------------------------------------------------------------------


def _is_bind(node: Comprehension) -> bool:
    return (
        isinstance(node.iter_range, CreateList)
        and not node.iter_range.elements
        and isinstance(node.loop_condition, Const)
        and node.loop_condition.value is False
    )


def _steps_tolerantly(node: Comprehension) -> bool:
    """An `all`/`exists` accumulator may hold an error that a later element absorbs."""
    step = node.loop_step
    return isinstance(step, Call) and step.function in ("_&&_", "_||_")


def _quantifier(node: Comprehension) -> tuple[bool, Expr] | None:
    """(deciding value, predicate) of an `all` (`@result && p` while `@result` is not false) or `exists` (`@result
    || p` while `!@result` is not false) loop, as the macros expand them."""
    step, condition, accu = node.loop_step, node.loop_condition, node.accu_var
    if not (isinstance(step, Call) and step.function in ("_&&_", "_||_") and _is_ident(step.args[0], accu)):
        return None
    deciding = step.function == "_||_"
    if not (isinstance(node.accu_init, Const) and node.accu_init.value is (not deciding)):
        return None
    if not (isinstance(condition, Call) and condition.function == "@not_strictly_false"):
        return None
    tested = condition.args[0]
    if deciding and isinstance(tested, Call) and tested.function == "!_":
        tested = tested.args[0]
    elif deciding:
        return None
    return (deciding, step.args[1]) if _is_ident(tested, accu) else None


def _appended_element(node: Comprehension) -> tuple[Expr | None, Expr] | None:
    """(guard, element) when the step is `@result + [e]` or `g ? @result + [e] : @result`."""
    accu = node.accu_var
    step, guard = node.loop_step, None
    if isinstance(step, Call) and step.function == "_?_:_" and _is_ident(step.args[2], accu):
        guard, step = step.args[0], step.args[1]
    if not (isinstance(node.accu_init, CreateList) and not node.accu_init.elements):
        return None
    if (
        isinstance(step, Call)
        and step.function == "_+_"
        and _is_ident(step.args[0], accu)
        and isinstance(step.args[1], CreateList)
        and len(step.args[1].elements) == 1
        and not step.args[1].optional_indices
    ):
        return guard, step.args[1].elements[0]
    return None


def _is_ident(node: Expr, name: str) -> bool:
    return isinstance(node, Ident) and node.name == name


def loop_membership(cg: Planner, node: Call) -> str:
    """`x in list` in a loop, over a list read from the evaluation's input: the same list at every step, so its
    strings are indexed once (only a string equals a string in CEL; any other item tests the list itself). The fast
    variant indexes them before the loop (if that fails, say on a map, the exact variant runs); the others on first
    use, as a read may fail and a loop may not run."""
    item, container = cg.gen_args(node.args)
    if cg.subscripts:
        cell = container if container.isidentifier() else cg.temp("_r")
        strings, i = cg.temp("_s"), cg.temp("_i")
        if cell != container:
            cg.preamble.append(f"{cell} = {container}")
        cg.preamble.append(f"{strings} = _string_set({cell})")
        return f"({i} in {strings} if ({i} := {item}).__class__ is str else _in_container({i}, {cell}))"
    index = cg.temp("_mi")
    cg.preamble.append(f"{index} = _MemberIndex()")
    return f"{index}.contains({item}, {container})"
