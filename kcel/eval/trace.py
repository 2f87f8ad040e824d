"""Why an expression gave its result: each subexpression's value, and what decided `&&`, `||`, `?:` and macros.

A traced program (`CodeGen(..., traced=True)`) reports every node's value or error to a `Tracer`, and
the start of every comprehension step. `explain()` turns that record into a tree of the expression as
written: a node's children are read from the events between its previous evaluation and this one, so
inside a macro the predicate shows its values for one step — the step that decided the result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kcel.errors import CelError, CostLimitExceeded, EvalError
from kcel.eval.display import cel_text
from kcel.eval.runtime import CEL_ERRORS, as_eval_error
from kcel.parser import Parsed
from kcel.parser.ast import Call, Comprehension, Const, CreateList, CreateMap, Expr, Ident, Select
from kcel.parser.unparser import unparse_node

MAX_EVENTS = 200_000  # a longer evaluation is stopped: explaining it would not help anyone

_VALUE, _ERROR, _STEP = 0, 1, 2
_SHORT_CIRCUITS = frozenset({"_&&_", "_||_", "_?_:_", "or", "orValue"})
_VALUE_WIDTH = 80


class TraceTooLong(CostLimitExceeded):
    """Stops a traced evaluation (like a cost limit, it is never absorbed by `||` or a macro)."""

    def __init__(self) -> None:
        EvalError.__init__(self, f"explanation stopped after {MAX_EVENTS:,} steps")
        self.cost = None


class Tracer:
    """Receives the events of one traced evaluation (generated code calls `see` and `step`)."""

    def __init__(self) -> None:
        self.events: list[tuple[int, int, Any]] = []

    def see(self, node_id: int, compute: Callable[[], Any]) -> Any:
        try:
            value = compute()
        except TraceTooLong:
            raise
        except CEL_ERRORS as error:
            self._record(_ERROR, node_id, as_eval_error(error))
            raise
        self._record(_VALUE, node_id, value)
        return value

    def step(self, node_id: int, variables: tuple[Any, ...]) -> None:
        self._record(_STEP, node_id, variables)

    def _record(self, kind: int, node_id: int, payload: Any) -> None:
        if len(self.events) >= MAX_EVENTS:
            raise TraceTooLong()
        self.events.append((kind, node_id, payload))


_NOT_EVALUATED: Any = object()


@dataclass(frozen=True)
class Explained:
    """One subexpression as written, the value it took (or the error it raised), and why that mattered."""

    text: str
    value: Any  # a CelError when it failed
    evaluated: bool = True
    note: str = ""
    children: tuple[Explained, ...] = ()

    def lines(self, prefix: str = "", child_prefix: str = "") -> Iterator[str]:
        shown = f" = {cel_text(self.value, _VALUE_WIDTH)}" if self.evaluated else "  (not evaluated)"
        note = f"   <- {self.note}" if self.note else ""
        yield f"{prefix}{self.text}{shown}{note}"
        for i, child in enumerate(self.children):
            last = i == len(self.children) - 1
            yield from child.lines(child_prefix + ("└─ " if last else "├─ "), child_prefix + ("   " if last else "│  "))

    def as_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"expression": self.text, "evaluated": self.evaluated}
        if self.evaluated:
            key = "error" if isinstance(self.value, CelError) else "value"
            record[key] = str(self.value) if key == "error" else cel_text(self.value)
        if self.note:
            record["note"] = self.note
        if self.children:
            record["children"] = [c.as_json() for c in self.children]
        return record


@dataclass(frozen=True)
class Explanation:
    """The result of an evaluation (value or error) with the tree that shows how it came about."""

    value: Any
    error: CelError | None
    root: Explained

    def text(self) -> str:
        return "\n".join(self.root.lines())


def explain(parsed: Parsed, tracer: Tracer, value: Any, error: CelError | None) -> Explanation:
    events = tracer.events
    return Explanation(value, error, _Explainer(parsed, events).node(parsed.expr, 0, len(events)))


class _Explainer:
    def __init__(self, parsed: Parsed, events: list[tuple[int, int, Any]]) -> None:
        self.parsed = parsed
        self.events = events

    def node(self, node: Expr, lo: int, hi: int, note: str = "") -> Explained:
        text = unparse_node(self.parsed, node)
        at = self.last(node.id, lo, hi)
        if at is not None:
            start = self.previous(node.id, lo, at) + 1
            value = self.events[at][2]
        else:  # an error raised by the statements of `&&`, `||` or a loop unwinds past the node's own record
            failed = self.failure_inside(node, lo, hi)
            if failed is None:
                return Explained(text, None, evaluated=False, note=note)
            start, at = lo, failed + 1
            value = self.events[failed][2]
        written = self.parsed.macro_calls.get(node.id)
        if isinstance(node, Comprehension) and written is not None:
            return self.macro(node, written, text, value, start, at, note)
        # A macro that expands into a call around a comprehension (`optMap`): its operands as written.
        shown = written if isinstance(node, Call) and written is not None else node
        children = tuple(self.children(shown, value, start, at))
        return Explained(text, value, note=note, children=children)

    def last(self, node_id: int, lo: int, hi: int) -> int | None:
        """The index of the last value/error event of `node_id` in [lo, hi)."""
        for i in range(hi - 1, lo - 1, -1):
            kind, seen, _ = self.events[i]
            if seen == node_id and kind != _STEP:
                return i
        return None

    def failure_inside(self, node: Expr, lo: int, hi: int) -> int | None:
        """The last error event in [lo, hi) from inside `node`: the error that unwound it."""
        inside = _subtree_ids(node)
        for i in range(hi - 1, lo - 1, -1):
            kind, seen, _ = self.events[i]
            if seen in inside and kind == _ERROR:
                return i
        return None

    def previous(self, node_id: int, lo: int, at: int) -> int:
        """The event before `at` where the same node was evaluated last (a loop), or lo - 1."""
        found = self.last(node_id, lo, at)
        return lo - 1 if found is None else found

    def children(self, node: Expr, value: Any, lo: int, hi: int) -> Iterator[Explained]:
        operands = _operands(node)
        if isinstance(node, Call) and node.function in _SHORT_CIRCUITS:
            decider = self.decider(node, value, lo, hi)
            for operand in operands:
                if not isinstance(operand, Const):
                    yield self.node(operand, lo, hi, note=_decides(node) if operand is decider else "")
            return
        for operand in operands:
            if isinstance(operand, Const) or (isinstance(operand, Ident) and isinstance(node, Select)):
                continue  # `self` in `self.spec` says nothing the select does not
            child = self.node(operand, lo, hi)
            path_step = isinstance(node, Select) and not isinstance(child.value, CelError)
            if child.evaluated and not _literal(child) and not path_step:
                yield child  # (`self.spec` in `self.spec.replicas` is shown only when it failed)

    def decider(self, node: Call, value: Any, lo: int, hi: int) -> Expr | None:
        """The operand that fixed the result of `&&`, `||` or `?:`."""
        if node.function == "_?_:_":
            return node.args[0]
        if node.function not in ("_&&_", "_||_"):
            return None
        decisive = node.function == "_||_"
        if value is decisive:
            wanted: Callable[[Any], bool] = lambda v: v is decisive  # noqa: E731
        elif isinstance(value, CelError):
            wanted = lambda v: isinstance(v, CelError)  # noqa: E731
        else:
            return None  # both operands were needed
        for operand in node.args:
            at = self.last(operand.id, lo, hi)
            if at is not None and wanted(self.events[at][2]):
                return operand
        return None

    def macro(
        self, node: Comprehension, written: Call, text: str, value: Any, lo: int, hi: int, note: str
    ) -> Explained:
        steps = [i for i in range(lo, hi) if self.events[i][0] == _STEP and self.events[i][1] == node.id]
        body = _macro_body(node, written)
        head: list[Explained] = []
        if written.target is not None and not isinstance(written.target, Const):
            target = self.node(written.target, lo, steps[0] if steps else hi)
            head = [target] if target.evaluated and not _literal(target) else []  # `cel` in `cel.bind` is no value
        if not steps:
            looping = written.function != "bind"
            children = [self.node(a, lo, hi) for a in body if not isinstance(a, Const)]
            return Explained(text, value, note=_join(note, "no steps" if looping else ""), children=(*head, *children))
        bounds = [*steps, hi]
        chosen, why = self.deciding_step(written, value, body, bounds)
        first, last = bounds[chosen], bounds[chosen + 1]
        variables = [n for n in (node.iter_var, node.iter_var2) if n]
        names = ", ".join(f"{n} = {cel_text(v, 40)}" for n, v in zip(variables, self.events[first][2], strict=False))
        step_note = f"step {chosen + 1} of {self.step_count(node, lo, steps)}: {names}"
        children = [self.node(a, first + 1, last, note=step_note) for a in body if not isinstance(a, Const)]
        return Explained(text, value, note=_join(note, why), children=(*head, *children))

    def step_count(self, node: Comprehension, lo: int, steps: list[int]) -> int:
        """How many steps the macro had to take: the size of its range (it may have stopped early)."""
        at = self.last(node.iter_range.id, lo, steps[0])
        iterated = self.events[at][2] if at is not None else None
        return len(iterated) if isinstance(iterated, (list, tuple, Mapping)) else len(steps)

    def deciding_step(self, written: Call, value: Any, body: list[Expr], bounds: list[int]) -> tuple[int, str]:
        """Which step of a macro to show: the one that decided `all`/`exists`/`exists_one`, else the last."""
        predicate = body[-1] if body else None
        values = []
        for i in range(len(bounds) - 1):
            at = self.last(predicate.id, bounds[i], bounds[i + 1]) if predicate is not None else None
            values.append(self.events[at][2] if at is not None else _NOT_EVALUATED)
        errors = [i for i, v in enumerate(values) if isinstance(v, CelError)]
        function = written.function
        if isinstance(value, CelError) and errors:
            return errors[0], f"failed at step {errors[0] + 1}"
        if function == "all" and value is False:
            return values.index(False), f"false at step {values.index(False) + 1}"
        if function == "exists" and value is True:
            return values.index(True), f"true at step {values.index(True) + 1}"
        if function in ("exists_one", "existsOne") and value is False:
            trues = [i for i, v in enumerate(values) if v is True]
            if len(trues) > 1:
                return trues[1], f"a second match at step {trues[1] + 1}"
            return len(values) - 1, "no element matched"
        return len(values) - 1, f"{len(values)} steps"


def _operands(node: Expr) -> list[Expr]:
    if isinstance(node, Call):
        return [node.target, *node.args] if node.target is not None else list(node.args)
    if isinstance(node, Select):
        return [node.operand]
    if isinstance(node, CreateList):
        return list(node.elements)
    if isinstance(node, CreateMap):
        return [x for entry in node.entries for x in (entry.key, entry.value)]
    return []


def _literal(explained: Explained) -> bool:
    """A list or map literal whose value reads the same as its text: nothing to explain."""
    return cel_text(explained.value) == explained.text


def _subtree_ids(node: Expr) -> frozenset[int]:
    ids = {node.id}
    if isinstance(node, Comprehension):
        parts = [node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result]
    else:
        parts = _operands(node)
    for part in parts:
        ids |= _subtree_ids(part)
    return frozenset(ids)


def _macro_body(node: Comprehension, written: Call) -> list[Expr]:
    """A macro's arguments after the leading names it binds (`x` in `all(x, p)`, `v` in `cel.bind(v, i, e)`)."""
    bound = {node.iter_var, node.iter_var2, node.accu_var}
    args = list(written.args)
    while args and isinstance(args[0], Ident) and args[0].name in bound and len(args) > 1:
        args.pop(0)
    return args


def _decides(node: Call) -> str:
    return "chose the branch" if node.function == "_?_:_" else f"decided {node.function.strip('_')}"


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
