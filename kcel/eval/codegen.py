"""Plans an expression into the source of one Python function (stage 3, `plan`).

Each AST node becomes a Python expression string; nodes that need control flow (`&&`, `||`,
`?:`, comprehensions, optional `or`) first emit statements and then stand for a temporary
(those are planned in `kcel.eval.control_flow`, writing through this module's `CodeGen`).
When an argument emits statements, the arguments before it are spilled to temporaries so
CEL's left-to-right order is kept. User text only ever enters the source through `repr()` of a
str/bytes/int/float literal; every other value is bound into the function's namespace, and
CEL names are mangled into numbered Python names.

With `metered=True` the function also counts cel-go's runtime cost on a `Meter` (`_m`),
one `_m.add(n)` per straight-line block plus each call's own cost, checking the limit as it goes.
With `traced=True` (and no metering) `_m` is a `kcel.eval.trace.Tracer` instead, told each node's
value or error (`_m.see(id, lambda: ...)`) and each comprehension step (`_m.step(id, vars)`).
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kcel.checker import names
from kcel.checker.checker import Checked
from kcel.checker.decls import Overload, StructType
from kcel.checker.types import CelType
from kcel.errors import EvalError, PlanError
from kcel.eval import control_flow, folding, inputs, runtime
from kcel.eval.control_flow import Local
from kcel.eval.dispatch import dispatcher, metered_dispatcher
from kcel.eval.writer import Writer
from kcel.parser import Parsed
from kcel.parser.ast import (
    Call,
    Comprehension,
    Const,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    Ident,
    Select,
)
from kcel.values import TypeValue, Uint

_SPILL_DEPTH = 20  # levels of nesting between temporaries (each level adds a few parentheses)
_SIMPLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z|-?[0-9][0-9.e+-]*\Z")
_BINARY_HELPERS = {
    "_+_": "add", "_-_": "subtract", "_*_": "multiply", "_/_": "divide", "_%_": "modulo",
    "_<_": "less", "_<=_": "less_equals", "_>_": "greater", "_>=_": "greater_equals",
    "_==_": "equals", "_!=_": "not_equals", "@in": "in_container", "_[_]": "index",
    "_[?_]": "optional_index",
}  # fmt: skip
# Overloads the planner writes as Python operators once the checker has fixed both operand types:
# overload id -> (template, whether its runtime cost depends on operand sizes).
_INLINE_OPERATORS: dict[str, tuple[str, bool]] = {
    **{f"{op}_{t}": (f"({{}} {sym} {{}})", t in ("string", "bytes"))
       for op, sym in (("less", "<"), ("less_equals", "<="), ("greater", ">"), ("greater_equals", ">="))
       for t in ("int64", "uint64", "string", "bytes")},  # doubles: NaN cannot be ordered
    "add_int64": ("_add_int64({}, {})", False), "subtract_int64": ("_subtract_int64({}, {})", False),
    "add_double": ("({} + {})", False), "subtract_double": ("({} - {})", False),
    "multiply_double": ("({} * {})", False), "add_string": ("({} + {})", True),
}  # fmt: skip
# Types whose values compare alike under Python's `==` and CEL's (two bools, two ints, two strings...).
_PYTHON_EQUALITY = frozenset({"bool", "int", "uint", "double", "string", "bytes"})
# Functions whose runtime cost is not 1: metered programs call the costed variant (kcel.eval.metered).
_MAX_NESTED_CAPTURES = 8
_SIZED_OPERATORS = frozenset({"_+_", "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in"})
_SIZED_OVERLOADS = frozenset(
    ["equals", "not_equals", "in_list", "in_map", "add_string", "add_bytes", "add_list"]
    + [f"{op}_{t}" for op in ("less", "less_equals", "greater", "greater_equals") for t in ("string", "bytes")]
)  # cel-go's runtime cost of these depends on the operands (interpreter/runtimecost.go costCall)
_TEXT_OVERLOADS = frozenset(o for o in _SIZED_OVERLOADS if o.endswith(("_string", "_bytes")))  # priced by sizes
_RUNTIME_NAMES = {f"_{name}": value for name, value in runtime.EXPORTED.items()}  # what generated code sees first
_SET_ELEMENTS = frozenset({bool, int, Uint, float, str})  # cel-go's primitive types a membership set takes


class Declarations(Protocol):
    """What the planner needs to know about the environment."""

    container: str
    keyword_field_names: bool
    error_on_bad_presence_test: bool  # cel-go's EnableErrorOnBadPresenceTest (cel-spec sets it, Kubernetes not)
    lenient_optional_or: bool  # cel-go before v0.28: `a.or(b)` with a non-optional `a` gives `a`
    optionals_through_go: bool  # cel-go before v0.29: `c ? optional.of(optional.of(1)) : ...` is `optional.of(1)`
    shared_macro_targets: bool  # cel-go before v0.22, which also evaluated a comprehension's initialiser first
    presence_test_cost: int  # what `has()` costs itself: 1 in cel-go, 0 in Kubernetes (PresenceTestHasCost(false))

    @property
    def variables(self) -> Mapping[str, CelType]: ...  # the declared variables' types
    def is_variable(self, name: str) -> bool: ...
    def type_value(self, name: str) -> TypeValue | None: ...
    @property
    def constants(self) -> Mapping[str, Any]: ...
    def overloads(self, function: str) -> Sequence[Overload]: ...
    def struct_type(self, name: str) -> StructType | None: ...


@dataclass(frozen=True)
class Plan:
    """The generated source and the namespace to execute it in."""

    source: str
    namespace: dict[str, Any]
    function_name: str
    variables: frozenset[str] = frozenset()  # the declared variables the code reads


class CodeGen:
    def __init__(
        self,
        parsed: Parsed,
        decls: Declarations,
        metered: bool,
        checked: Checked | None = None,
        optimize: bool = True,
        traced: bool = False,
        inline: bool = True,
        exact_failures: bool = False,
    ) -> None:
        self.parsed = parsed
        self.traced = traced and not metered
        # Metered, for an evaluation that failed: cel-go's cost of the failure. Each step is charged just before it
        # runs (not a block's sum up front), every operand of a unary or binary call is evaluated before the call
        # fails, and a list, map or message literal whose element failed is still charged.
        self.exact_failures = exact_failures and metered
        # `x["f"]` for a field of plain data, where a Python TypeError stands for cel-go's error; without it every
        # selection goes through the runtime helpers, which give cel-go's exact errors (kcel.eval.program).
        self.inline = inline and not self.traced
        # A missing variable fails where it is used: the strict variants test each use (`_bound`), the others stop
        # at the start when one is missing and the program runs its strict variant instead (kcel.eval.program).
        self.strict_variables = not self.inline
        # `Program.evaluate`'s variant reads with subscripts and absorbs no error: any error runs the exact variant.
        self.subscripts = self.inline and not metered
        self.optimize = optimize  # cel-go's OptOptimize, which Kubernetes sets: constant literals are folded
        self.decls = decls
        self.metered = metered
        # What the checker proved: node types and the overloads each call may use (empty if unchecked).
        self.types: Mapping[int, CelType] = checked.types if checked else {}
        self.chosen: Mapping[int, tuple[str, ...]] = checked.overloads if checked else {}
        self.w = Writer()
        self.namespace: dict[str, Any] = dict(_RUNTIME_NAMES)
        self.scopes: list[dict[str, Local]] = [{}]
        self.variables: dict[str, str] = {}
        self.schema_objects: set[str] = set()  # variables declared with a schema's object type (data as dicts)
        self.bound: dict[int, str] = {}
        self.counter = 0
        self.pending = 0  # static cost not yet emitted as `_m.add(...)`
        self.depth = 0  # nesting of gen() calls
        self.uncharged = 0  # > 0 while generating what cel-go evaluates without charging (attribute qualifiers)
        self.captures = 0  # `try` blocks of `capture` around the code being generated
        self.resolved_attribute: int | None = None  # the step charging an attribute cel-go resolves (a key, a branch)
        self.loops = 0  # comprehension loops around the code being generated
        self.preamble: list[str] = []  # statements at the start of the function, after reading the variables
        self.held: dict[Expr, str] = {}  # the fast variant's reads of the input already in a temporary here
        # cel-go's EnableErrorOnBadPresenceTest (cel-spec's conformance environment sets it, Kubernetes does not):
        # a presence test or optional selection on an int, a string... is an error rather than absent.
        self.presence = ", True" if decls.error_on_bad_presence_test else ""
        self.lenient_optional_or = decls.lenient_optional_or
        self.optionals_through_go = decls.optionals_through_go
        self.eager_binds = decls.shared_macro_targets  # `cel.bind`/optMap initialisers run at once, used or not

    # -- entry -------------------------------------------------------------------------------

    def plan(self, name: str = "_kcel_eval") -> Plan:
        result = self.gen(self.parsed.expr)
        self.flush()
        # At the root every error raises where it happens (nothing tolerant holds one) and a missing variable has
        # stopped the program or failed where it was used: the result is a value.
        self.w.line(f"return {result}" if not self.traced else f"return _unwrap({result})")
        header = [f"def {name}(_act, _m):"]
        for var, py in self.variables.items():
            missing = f".get({var!r}, {self.bind(inputs.Unbound(var), '_unbound')})"
            read = f"_act{f'[{var!r}]' if self.subscripts else missing}"
            # An object of a schema's type is read by subscripts and helpers that fail on anything but a mapping,
            # which sends the evaluation to the exact variant (which converts): no class test for it here.
            schema_object = self.subscripts and var in self.schema_objects
            declared = self.decls.variables.get(var)
            header += inputs.read_variable(py, read, declared, self.strict_variables, schema_object)
        header += [f"    {line}" for line in self.preamble]
        return Plan("\n".join([*header, self.w.source()]), self.namespace, name, frozenset(self.variables))

    # -- small utilities ---------------------------------------------------------------------

    def temp(self, prefix: str = "_t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def bind(self, value: Any, prefix: str = "_k") -> str:
        """Put a value into the namespace once and return its name."""
        key = id(value)
        if key not in self.bound:
            name = self.temp(prefix)
            self.namespace[name] = value
            self.bound[key] = name
        return self.bound[key]

    def cost(self, amount: int) -> None:
        if self.metered and not self.uncharged:
            self.pending += amount

    def flush(self) -> None:
        if self.metered and self.pending:
            self.w.line(f"_m.add({self.pending})")
            self.pending = 0

    def lookup(self, name: str) -> Local | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    # -- dispatch on node kind ---------------------------------------------------------------

    def gen(self, node: Expr, tolerant: bool = False) -> str:
        """Python expression for a node. `tolerant`: the caller accepts an error value.

        Every few levels the text is stored in a temporary, so that deep CEL (250 levels are
        allowed) never reaches Python's limit of 200 nested parentheses.
        """
        self.depth += 1
        try:
            text = self.gen_node(node, tolerant)
        finally:
            self.depth -= 1
        if self.traced:
            text = f"_m.see({node.id}, lambda: {text})"
        if (self.depth % _SPILL_DEPTH and not self.exact_failures) or _SIMPLE.match(text):
            return text
        return self.spill(text)

    def gen_node(self, node: Expr, tolerant: bool) -> str:
        if isinstance(node, Const):
            return self.const(node.value)
        if isinstance(node, Ident):
            return self.ident(node, tolerant)
        if isinstance(node, Select):
            return self.select(node)
        if isinstance(node, Call):
            if node.function in folding.TYPE_CONVERSIONS:
                folded, value = self.constant(node)
                if folded:  # a map (`dyn({...})`, the identity) is built afresh, as a dict is mutable
                    return self.gen(node.args[0]) if isinstance(value, dict) else self.const(value)
            return self.call(node, tolerant)
        if isinstance(node, CreateList):
            return self.create_list(node)
        if isinstance(node, CreateMap):
            return self.create_map(node)
        if isinstance(node, Comprehension):
            return control_flow.comprehension(self, node, tolerant)
        assert isinstance(node, CreateStruct)
        return self.create_struct(node)

    def constant(self, node: Expr) -> tuple[bool, Any]:
        """Whether the planner folds `node` to a value, and the value (kcel.eval.folding)."""
        return folding.constant(self, node) if self.optimize or isinstance(node, Const) else (False, None)

    def const(self, value: Any) -> str:
        if value is None or isinstance(value, bool):
            return repr(value)
        if isinstance(value, Uint):
            return self.bind(value, "_u")
        if isinstance(value, (int, str, bytes)) or (isinstance(value, float) and math.isfinite(value)):
            return repr(value)  # the only way user text reaches the source; NaN and ±Inf have no literal
        return self.bind(value, "_k")

    # -- names -------------------------------------------------------------------------------

    def is_local(self, name: str) -> bool:
        return self.lookup(name) is not None

    def candidates(self, name: str) -> list[str]:
        return names.candidates(name, self.decls.container)

    def ident(self, node: Ident, tolerant: bool) -> str:
        if node.id == self.resolved_attribute:
            self.uncharged += 1
            try:
                return self.named(node, tolerant)
            finally:
                self.uncharged -= 1
        return self.named(node, tolerant)

    def named(self, node: Ident, tolerant: bool) -> str:
        local = self.lookup(node.name)
        if local is not None:
            return self.local(local, tolerant)
        for candidate in self.candidates(node.name):
            if self.decls.is_variable(candidate):
                return self.variable(candidate, node)
            if candidate in self.decls.constants:
                self.cost(1)
                return self.const(self.decls.constants[candidate])
        for candidate in self.candidates(node.name):
            type_value = self.decls.type_value(candidate)
            if type_value is not None:
                return self.bind(type_value, "_type")
        return self.variable(node.name.lstrip("."))

    def local(self, local: Local, tolerant: bool) -> str:
        if local.lazy and self.exact_failures and not self.uncharged:  # observed after its value, which may fail
            self.namespace.setdefault("_metered", _metered_module())
            return f"_metered.force_read(_m, {local.py})"
        self.cost(1)
        if local.lazy:
            return f"_force({local.py})"
        if local.may_hold_error and not tolerant:
            return f"_unwrap({local.py})"
        return local.py

    def variable(self, name: str, node: Expr | None = None) -> str:
        self.cost(1)
        if name not in self.variables:
            self.variables[name] = f"_v{len(self.variables) + 1}"
            if node is not None and self.schema_object(node) is not None:
                self.schema_objects.add(name)
        return f"_bound({self.variables[name]})" if self.strict_variables else self.variables[name]

    def qualified_name(self, node: Expr) -> str | None:
        return names.qualified_name(node, self.is_local)

    def declared_name(self, node: Select) -> str | None:
        """The declared variable, constant or type a select chain names as a whole (`a.b` declared)."""
        name = self.qualified_name(node)
        if name is None or "." not in name.lstrip("."):
            return None
        decls = self.decls
        return next(
            (c for c in self.candidates(name) if decls.is_variable(c) or c in decls.constants or decls.type_value(c)),
            None,
        )

    def resolve_select(self, node: Select) -> str | None:
        """A select chain that names a declared variable, constant or type; uncharged when resolved."""
        candidate = self.declared_name(node)
        if candidate is None:
            return None
        type_value = self.decls.type_value(candidate)
        if not self.decls.is_variable(candidate) and candidate not in self.decls.constants and type_value is not None:
            return self.bind(type_value, "_type")
        self.uncharged += node.id == self.resolved_attribute
        try:
            if self.decls.is_variable(candidate):
                return self.variable(candidate, node)
            self.cost(1)
            return self.const(self.decls.constants[candidate])
        finally:
            self.uncharged -= node.id == self.resolved_attribute

    # -- selection ---------------------------------------------------------------------------

    def is_plain_data(self, node: Expr) -> bool:
        """Whether a node surely yields JSON-like data (never an optional), so `x[f]` may be inlined."""
        if not self.inline:
            return False
        while isinstance(node, Select) and not node.test_only:
            node = node.operand
        return isinstance(node, Ident) and self.lookup(node.name) is None and self.decls.is_variable(node.name)

    def select(self, node: Select) -> str:
        if self.held and node in self.held:
            return self.held[node]
        resolved = self.resolve_select(node) if not node.test_only else None
        if resolved is not None:
            return resolved
        if node.test_only:
            return control_flow.presence_test(self, node)
        access = self.schema_field(node.operand, node.field)
        operand = self.opaque(node.operand, self.attribute_operand(node, node.operand))
        self.cost(self.qualifier_cost(node, node.operand))
        if access is not None:
            if self.is_optional(node.operand):  # `opt.field` stays optional (chained optionals)
                return self.optional_qualifier(self.bind(access.read_optional, "_opt"), operand)
            read = self.bind(access.read, "_get")
            if access.key is None and self.loops and not self.metered and not self.traced:
                if self.read_from_input(node):  # a conversion (a list's, a map's) once, not at every step
                    cell = self.temp("_r")  # at once in the fast variant: if the read fails, the exact one runs
                    if self.subscripts:
                        self.preamble.append(f"{cell} = {read}({operand})")
                        return cell
                    self.preamble.append(f"{cell} = _Lazy(lambda: {read}({operand}))")
                    return f"({cell}.value if {cell}.done else _force({cell}))"
            if access.owner is not None and self.inline and _is_attribute_name(access.attribute):
                holder, bound = self.holder(operand)  # the condition is evaluated first, then the attribute read
                owner = self.bind(access.owner, "_c")
                return f"({holder}.{access.attribute} if {bound}.__class__ is {owner} else {read}({holder}))"
            if access.key is None or not self.inline:
                return f"{read}({operand})"
            # In place, operand evaluated once: a dict's non-null value is the answer, anything else asks `read`.
            value, (holder, bound) = self.temp("_w"), self.holder(operand)
            found = f"({value} := {bound}[{access.key!r}])"  # if not found: a TypeError or a KeyError
            if not self.subscripts:
                found = f"{bound}.__class__ is dict and ({value} := {holder}.get({access.key!r}))"
            return f"({value} if {found}.__class__ is {self.plain(access)} else {read}({holder}))"
        if self.is_plain_data(node.operand):
            return f"{operand}[{node.field!r}]"
        if self.is_optional(node.operand):
            return self.optional_qualifier("_select", f"{operand}, {node.field!r}{self.presence}")
        return f"_select({operand}, {node.field!r}{self.presence})"

    def is_optional(self, node: Expr) -> bool:
        """Whether a selection or index on `node` is one of a chain of optional qualifiers, which cel-go charges only
        when it finds something: after a `.?f` or `[?k]` of the same attribute, or on an optional it starts from
        (`optional.of(m).a`); not on an optional a plain qualifier found (`{'a': optional.none()}.a.b`)."""
        while isinstance(node, Select | Call) and not (isinstance(node, Select) and node.test_only):
            if isinstance(node, Call) and node.function in ("_?._", "_[?_]"):
                return True
            if isinstance(node, Call) and node.function != "_[_]":
                break
            node = node.operand if isinstance(node, Select) else node.args[0]
        return self.typed_optional(node)

    def typed_optional(self, node: Expr) -> bool:
        t = self.types.get(node.id)
        return t is not None and t.name == "optional_type"

    def opaque(self, node: Expr, operand: str) -> str:
        """An optional a plain qualifier found (`{'a': optional.of(m)}.a`) is no map to the next plain qualifier."""
        return f"_opaque_optional({operand})" if self.typed_optional(node) and not self.is_optional(node) else operand

    def holder(self, operand: str) -> tuple[str, str]:
        """A name for an operand read inline twice, and the text that evaluates it once into that name."""
        if operand.isidentifier():
            return operand, operand
        name = self.temp("_o")
        return name, f"({name} := {operand})"

    def plain(self, access: Any) -> str:
        return self.bind(access.plain, "_c")

    def spill(self, text: str) -> str:
        """Evaluate `text` now, into a temporary, and return the temporary's name."""
        name = self.temp()
        self.flush()
        self.w.line(f"{name} = {text}")
        return name

    def schema_object(self, node: Expr) -> Any:
        """The schema type (kcel.k8s.schemas.decltypes.DeclType) of a node the checker typed as a schema object."""
        t = self.types.get(node.id)
        if t is not None and t.name == "optional_type" and t.params:
            t = t.params[0]
        return t.decl if t is not None and t.kind == "message" else None

    def schema_field(self, operand: Expr, field: str) -> Any:
        """How to read `field` of a schema object (None for anything else)."""
        decl = self.schema_object(operand)
        return decl.field_access(field, self.decls.keyword_field_names) if decl is not None else None

    def schema_equals(self, node: Call, left: str, right: str) -> str:
        """`==`/`!=` with a schema object on the left: unknown fields and nulls compare as Kubernetes does."""
        equals = self.bind(self.schema_object(node.args[0]).equals, "_eq")
        if self.metered:
            self.namespace.setdefault("_metered", _metered_module())
            text = f"_metered.equals_by(_m, {equals}, {left}, {right})"
        else:
            self.cost(1)
            text = f"{equals}({left}, {right})"
        return text if node.function == "_==_" else f"(not {text})"

    def plans_as_attribute(self, node: Expr) -> bool:
        """Whether cel-go's planner makes `node` an attribute, to which a selection or index adds a qualifier (1);
        on anything else it starts a relative attribute (1 more). A chain on a call (`dyn(m).a.b`) is one relative
        attribute with two qualifiers."""
        if isinstance(node, Select):
            return not node.test_only
        if isinstance(node, Call):  # a conditional is an attribute over its branches
            return node.function in ("_[_]", "_?._", "_[?_]", "_?_:_")
        return isinstance(node, Ident)

    def attribute_root(self, node: Expr) -> Expr:
        """The step of an attribute that carries the attribute's own charge, which cel-go makes when the attribute is
        evaluated (not resolved): its name, or the first selection or index on something else (`{}[u]` of
        `{}[u][k]`)."""
        while True:
            if isinstance(node, Select) and not node.test_only and self.declared_name(node) is None:
                operand = node.operand
            elif isinstance(node, Call) and node.function in ("_[_]", "_?._", "_[?_]"):
                operand = node.args[0]
            else:
                return node
            if not self.plans_as_attribute(operand):
                return node
            node = operand

    def resolved(self, node: Expr, tolerant: bool = False) -> str:
        """An attribute cel-go resolves rather than evaluates (an index, a `?:` branch): its qualifiers are charged,
        not the attribute itself."""
        outer = self.resolved_attribute
        self.resolved_attribute = self.attribute_root(node).id
        try:
            return self.gen(node, tolerant)
        finally:
            self.resolved_attribute = outer

    # -- calls -------------------------------------------------------------------------------

    def gen_args(self, nodes: Sequence[Expr], free: Expr | None = None) -> list[str]:
        """Arguments in order; earlier ones are spilled if a later one needs statements.

        `free`: an attribute used as an index, which cel-go resolves as a qualifier: its own evaluation is not
        charged, only its qualifiers.
        """
        exprs: list[str] = []
        for node in nodes:
            mark = self.w.mark()
            text = self.resolved(node) if node is free else self.gen(node)
            if self.w.mark() != mark and any(not _SIMPLE.match(e) for e in exprs):
                spills: list[str] = []
                for i, previous in enumerate(exprs):
                    if not _SIMPLE.match(previous):
                        name = self.temp()
                        spills.append(f"{name} = {previous}")
                        exprs[i] = name
                self.w.insert(mark, spills)
            exprs.append(text)
        return exprs

    def call(self, node: Call, tolerant: bool) -> str:
        fn = node.function
        if fn in ("_&&_", "_||_"):
            return control_flow.logic(self, node, tolerant)
        if fn == "_?_:_":
            return control_flow.conditional(self, node, tolerant)
        if fn == "@not_strictly_false":
            return control_flow.not_strictly_false(self, node.args[0])
        if fn == "!_":
            (operand,) = self.operands(node.args)
            self.cost(1)
            return f"(not {operand})" if control_flow.always_bool(self, node.args[0]) else f"_logical_not({operand})"
        if fn == "-_":
            (operand,) = self.operands(node.args)
            self.cost(1)
            return f"_negate({operand})"
        if fn == "_?._":
            operand = self.attribute_operand(node, node.args[0])
            self.cost(self.qualifier_cost(node, node.args[0]))
            access = self.schema_field(node.args[0], _field_of(node))
            if access is not None:
                return self.optional_qualifier(self.bind(access.read_optional, "_opt"), operand)
            return self.optional_qualifier(
                "_optional_select", f"{operand}, {self.const(_field_of(node))}{self.presence}"
            )
        if self.optimize and folding.set_membership(self, node):
            folded, elements = self.constant(node.args[1])
            if folded and isinstance(elements, tuple) and all(e.__class__ in _SET_ELEMENTS for e in elements):
                return folding.in_constant_set(self, node, elements)
        if fn == "@in" and self.loops and not self.metered and not self.traced and self.read_from_input(node.args[1]):
            return control_flow.loop_membership(self, node)
        if fn in _BINARY_HELPERS:
            return self.binary(node)
        if fn == "cel.@mapInsert":
            args = self.operands(node.args)
            self.cost(1)
            helper = "_map_insert" if len(args) == 3 else "_map_insert_entry"
            return f"{helper}({', '.join(args)})"
        if fn == "cel.@block":
            return control_flow.block(self, node)
        if node.target is not None and fn in ("or", "orValue") and len(node.args) == 1:
            return control_flow.optional_or(self, node)
        return self.function_call(node)

    def read_from_input(self, node: Expr) -> bool:
        """Whether `node` is a variable of the activation, or a field or constant index of one: the same object
        wherever in the evaluation it is read."""
        while True:
            if isinstance(node, Ident):
                return self.lookup(node.name) is None
            if isinstance(node, Select) and not node.test_only:
                node = node.operand
            elif isinstance(node, Call) and node.function == "_[_]" and isinstance(node.args[1], Const):
                node = node.args[0]
            else:
                return False

    def binary(self, node: Call) -> str:
        fn = node.function
        # An index that is itself an attribute (`m[k]`, `m[self.key]`, `l[[0][0]]`) becomes a qualifier of the
        # indexed attribute in cel-go, and its own evaluation is not charged.
        key = node.args[1]
        if fn in ("_[_]", "_[?_]"):
            folding.check_constant_key(self, key)
        qualifier = fn in ("_[_]", "_[?_]") and control_flow.resolved_key(self, key)
        template = self.inline_template(node)
        # Priced by the operands' sizes when the checker pinned a sized overload (or did not check); else cel-go's
        # tracker charges 1: an overload of fixed cost (`greater_equals_bool`), or none (`dyn(s) < dyn(s)`).
        chosen = self.chosen.get(node.id, ())
        sized = (
            self.metered
            and fn in _SIZED_OPERATORS
            and (not chosen or (len(chosen) == 1 and chosen[0] in _SIZED_OVERLOADS))
        )
        helper = _BINARY_HELPERS[fn] + ("_text" if sized and chosen and chosen[0] in _TEXT_OVERLOADS else "")
        if template is None and sized:
            left, right = control_flow.costed_operands(self, node.args, _metered_module().OPERATOR_COSTS[helper])
        elif fn not in ("_[_]", "_[?_]"):
            left, right = self.operands(node.args)
        elif self.exact_failures and not isinstance(key, Const):
            left, right = control_flow.computed_key(self, node, self.attribute_operand(node, node.args[0]))
        elif self.exact_failures:
            left = self.attribute_operand(node, node.args[0])
            (right,) = self.gen_args([key])
        else:
            left, right = self.gen_args(node.args, free=key if qualifier else None)
        if template is not None:
            self.cost(1)
            return template.format(left, right)
        if fn in ("_==_", "_!=_") and self.schema_object(node.args[0]) is not None:
            return self.schema_equals(node, left, right)
        if fn in ("_[_]", "_[?_]"):
            self.cost(self.qualifier_cost(node, node.args[0]))
            key = node.args[1]
            if fn == "_[_]" and self.is_plain_data(node.args[0]) and isinstance(key, Const) and type(key.value) is str:
                return f"{left}[{right}]"
            if fn == "_[?_]" or self.is_optional(node.args[0]):
                return self.optional_qualifier(f"_{helper}", f"{left}, {right}{self.presence}")
            container = self.opaque(node.args[0], left)
            if self.subscripts and not self.presence and container == left:  # a dict's str key: Python's lookup
                c, k = self.temp("_c"), self.temp("_k")
                hit = f"({c} := {left}).__class__ is dict and ({k} := {right}).__class__ is str"
                return f"({c}[{k}] if {hit} else _{helper}({c}, {right}))"
            return f"_{helper}({container}, {right}{self.presence})"
        if sized:
            self.namespace.setdefault("_metered", _metered_module())
            return f"_metered.{helper}(_m, {left}, {right})"
        self.cost(1)
        return f"_{helper}({left}, {right})"

    def optional_qualifier(self, function: str, args: str) -> str:
        """`x.?f`, `x[?k]`: cel-go's tracker charges the qualifier only when it finds something."""
        if not self.metered or self.uncharged:
            return f"{function}({args})"
        self.pending -= 1  # the qualifier's own unit, charged by the helper instead
        self.namespace.setdefault("_metered", _metered_module())
        return f"_metered.optional_qualifier(_m, {function}, {args})"

    def inline_template(self, node: Call) -> str | None:
        """Plain Python for an operator the checker typed with primitives on both sides (a format template)."""
        if node.function in ("_==_", "_!=_") and not self.metered:
            left, right = (self.types.get(arg.id) for arg in node.args)
            if left is not None and left == right and left.name in _PYTHON_EQUALITY:  # Python's == is CEL's
                return "({} == {})" if node.function == "_==_" else "({} != {})"
            return None
        chosen = self.chosen.get(node.id, ())
        if len(chosen) != 1 or chosen[0] not in _INLINE_OPERATORS or not self.statically_typed(node.args):
            return None
        template, sized = _INLINE_OPERATORS[chosen[0]]
        if self.metered and sized:
            return None  # the cost depends on the operands' sizes: use the metered helper
        return template

    def qualifier_cost(self, node: Expr, operand: Expr) -> int:
        """A selection or index: its qualifier, plus the relative attribute it starts on anything but an attribute,
        unless cel-go resolves that attribute as a `?:` branch."""
        return (1 if self.plans_as_attribute(operand) else 2) - (node.id == self.resolved_attribute)

    def deep(self) -> bool:
        """Whether the code being generated sits in so many `try` blocks and loops that another one could pass
        Python's limit of 20 nested blocks: then failures are not captured, and go uncharged."""
        return self.captures + self.loops >= _MAX_NESTED_CAPTURES

    def attribute_operand(self, node: Expr, operand: Expr) -> str:
        """What a selection or index is applied to. When failures are exact and it starts a relative attribute (a
        call, a literal), cel-go observes that attribute even when the operand failed (unless a `?:` resolves it)."""
        if not self.exact_failures or self.plans_as_attribute(operand) or self.deep():
            return self.gen(operand)
        return control_flow.charged_on_failure(self, operand, 0 if node.id == self.resolved_attribute else 1)

    def operands(self, nodes: Sequence[Expr]) -> list[str]:
        """Operands of a call that costs 1: when failures are exact, each is evaluated and the call charged even if
        one failed (as `costed_operands`)."""
        return control_flow.costed_operands(self, nodes, None) if self.exact_failures else self.gen_args(nodes)

    def cannot_fail(self, node: Expr) -> bool:
        if isinstance(node, Const):
            return True
        local = self.lookup(node.name) if isinstance(node, Ident) else None
        return local is not None and not local.lazy and not local.may_hold_error

    def statically_typed(self, nodes: Sequence[Expr]) -> bool:
        """Whether the checker pinned every node to a concrete type (no `dyn` to test at run time)."""
        return all(self._concrete(self.types.get(n.id)) for n in nodes)

    def _concrete(self, t: CelType | None) -> bool:
        return t is not None and t.kind not in ("dyn", "param", "error") and all(map(self._concrete, t.params))

    def function_call(self, node: Call) -> str:
        function, args, overloads = folding.call_overloads(self, node)
        chosen = self.chosen.get(node.id, ())
        folding.check_constant_arguments(self, overloads, args)
        static = len(chosen) == 1 and len(overloads) == 1 and self.statically_typed(args)
        costed = self.metered and overloads and (not static or overloads[0].cost is not None)
        only_cost = overloads[0].cost if len(overloads) == 1 else None
        capture = (costed or self.exact_failures) and not folding.compiled_pattern(self, overloads, args)
        texts = control_flow.costed_operands(self, args, only_cost) if capture else self.gen_args(args)
        # The checker fixed the overload: call it without runtime dispatch.
        if static:
            overload = overloads[0]
            impl = self.bind(overload.impl, "_f")
            if not self.metered or overload.cost is None:  # unmetered, or cel-go's default cost of 1
                self.cost(1)
                return f"{impl}({', '.join(texts)})"
            # The cost depends on the arguments: evaluate them once, into temporaries.
            values = [t if _SIMPLE.match(t) else self.spill(t) for t in texts]
            return f"_charge(_m, {self.bind(overload.cost, '_cost')}, {impl}, ({', '.join(values)},))"
        if not overloads:
            return self.unmatched_call(node, function, texts)
        if self.metered:
            impl = self.bind(metered_dispatcher(overloads), "_fm")
            return f"{impl}(_m, {', '.join(texts)})"
        impl = self.bind(dispatcher(overloads), "_f")
        return f"{impl}({', '.join(texts)})"

    def elements(self, nodes: Sequence[Expr], base_cost: int) -> list[str]:
        """A literal's elements in order (kcel.eval.control_flow.literal_elements)."""
        if not self.exact_failures or not base_cost or self.deep():
            return self.gen_args(nodes)
        return control_flow.literal_elements(self, nodes, base_cost)

    def unmatched_call(self, node: Call, function: str, args: list[str]) -> str:
        """An unchecked call that no overload takes by arity or call style, as cel-go plans it: an undeclared
        function has no implementation and fails when called (without arguments, when planned); a declared one with
        several overloads dispatches over them at run time, and fails naming the arguments' types."""
        declared = self.decls.overloads(function)
        if not declared:
            if not args:
                raise PlanError(f"no such overload: {function}()")
            shown = function if len(args) <= 2 else f"{function} {node.id}"
            self.cost(1)
            return f"_raise({self.bind(EvalError(f'no such overload: {shown}'))}, {', '.join(args)})"
        if len(declared) > 1:
            self.cost(1)
            return f"_unbound_call({function!r}, {', '.join(args)})"
        return f"_raise({self.bind(EvalError(f'no matching overload for {function!r}'))})"

    def create_list(self, node: CreateList) -> str:
        folded, value = self.constant(node)
        if folded:  # OptOptimize builds a constant list once, and it costs nothing
            return self.bind(value, "_list")
        items = self.elements(node.elements, 10)
        self.cost(10)
        if not node.optional_indices:
            return f"[{', '.join(items)}]"
        marked = ", ".join(f"({item}, {i in node.optional_indices})" for i, item in enumerate(items))
        return f"_list_with_optionals([{marked}])"

    def create_struct(self, node: CreateStruct) -> str:
        """A message literal: the declared type builds the value from its fields (unset optionals left out)."""
        t = self.types.get(node.id)
        declared = t.decl if t is not None and t.kind == "message" else None
        if declared is None:  # unchecked: resolve the name as the checker would
            found = (self.decls.struct_type(c) for c in names.candidates(node.type_name, self.decls.container))
            declared = next((s for s in found if s is not None), None)
        if declared is None:
            return f"_raise({self.bind(EvalError(f'unknown type: {node.type_name}'))})"
        values = self.elements([f.value for f in node.fields], 40)
        self.cost(40)  # cel-go StructCreateBaseCost
        entries = ", ".join(f"({f.name!r}, {v}, {f.optional})" for f, v in zip(node.fields, values, strict=True))
        return f"_make_struct({self.bind(declared.construct, '_new')}, [{entries}])"

    def create_map(self, node: CreateMap) -> str:
        # OptOptimize folds a constant map (nested ones too); it is still built afresh, as a dict is mutable
        base = 0 if self.optimize and self.constant(node)[0] else 30
        parts = self.elements([x for entry in node.entries for x in (entry.key, entry.value)], base)
        pairs = [f"({parts[2 * i]}, {parts[2 * i + 1]}, {entry.optional})" for i, entry in enumerate(node.entries)]
        built = f"_make_map_optional([{', '.join(pairs)}])" if pairs else "{}"
        if self.exact_failures and pairs:  # a map that cannot be built panics in cel-go, before it is charged
            built = self.spill(built)
        self.cost(base)
        return built


def _is_attribute_name(name: str | None) -> bool:
    """A name generated code may write after a dot: an identifier, not a keyword (`in` is a protobuf field name)."""
    return name is not None and name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("__")


def _field_of(node: Call) -> str:
    field = node.args[1]
    assert isinstance(field, Const) and isinstance(field.value, str)
    return field.value


def _metered_module() -> Any:
    from kcel.eval import metered

    return metered
