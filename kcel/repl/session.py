"""The REPL's session: `Session` holds the state and runs one input line at a time, returning the text to show; it
never raises, so a bad line never ends the session. Commands (`%let`, `%load`...) are one table, `COMMANDS`."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kcel.checker.types import DYN, CelType, parse_type
from kcel.checker.unify import Substitution, is_assignable
from kcel.env import Env
from kcel.errors import CelError, CompileError, EvalError
from kcel.eval.display import cel_text, result_type
from kcel.eval.program import Program
from kcel.k8s.environment import NEWEST
from kcel.libs import Library, Overload
from kcel.parser import parse
from kcel.parser.unparser import dump

PROMPT = "kcel> "
CONTINUATION = "....> "
MACROS = ("has", "all", "exists", "exists_one", "map", "filter", "cel.bind")
KEYWORDS = ("true", "false", "null", "in")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_LET = re.compile(rf"\s*({_IDENT})\s*(?::\s*(.+?))?\s*=(?!=)\s*(.+)\Z", re.S)
_FUNCTION = re.compile(rf"\s*({_IDENT})\s*\((.*?)\)\s*:\s*(.+?)\s*(?:->\s*(.+))?\Z", re.S)
_DECLARE = re.compile(rf"\s*({_IDENT})\s*:\s*(.+?)\s*\Z", re.S)
_PATH_STEP = re.compile(rf"({_IDENT}|\*)((?:\[\d+\])*)")


class CommandError(Exception):
    """A command that cannot run as written; the message says what to type instead."""


@dataclass(frozen=True)
class Let:
    """`%let name = expr`: a variable whose value comes from an expression over the earlier ones."""

    name: str
    expression: str
    declared: str | None = None


@dataclass(frozen=True)
class Function:
    """`%let f(x: int): int -> body` (or `%declare` without a body): a function usable in expressions."""

    name: str
    params: tuple[tuple[str, str], ...]
    result: str
    body: str | None = None

    @property
    def signature(self) -> str:
        params = ", ".join(f"{n}: {t}" for n, t in self.params)
        return f"{self.name}({params}): {self.result}" + (f" -> {self.body}" if self.body else "")


@dataclass
class SchemaContext:
    """A CRD loaded with `%load`: the schema node whose type `self` and `oldSelf` have, and its objects."""

    crd: Any  # kcel.k8s.crds.crd.CRD
    version: str
    path: tuple[str, ...]
    decl: Any  # kcel.k8s.schemas.decltypes.DeclType
    cardinality: int | None  # how often a rule here runs at most; None when a list or map above is unbounded
    object: Any = None
    old: Any = None


@dataclass
class State:
    """What the commands set (`%reset` starts over): options, names defined, the loaded CRD, admission values."""

    container: str = ""
    k8s_version: str = NEWEST  # the API server whose environment expressions compile in
    environment: str | None = None  # a named CEL environment (`%option --env webhook-match`)
    declarations: dict[str, str] = field(default_factory=dict)
    lets: dict[str, Let] = field(default_factory=dict)
    functions: dict[str, Function] = field(default_factory=dict)
    schema: SchemaContext | None = None
    admission: dict[str, Any] | None = None  # the admission variables' values once `%admission` is on


@dataclass(frozen=True)
class _Command:
    """A `%` command: the function that runs it, its usage and the summary `%help` shows."""

    run: Callable[[Session, str], str]
    usage: str
    summary: str


class Session:
    """The REPL without a terminal: `handle(line)` returns what to print."""

    def __init__(self, k8s_version: str | None = None, messages: Library | None = None) -> None:
        self.initial_version = k8s_version or NEWEST
        self.messages = messages  # protobuf message types (`kcel repl --messages`), in every environment
        self.state = State(k8s_version=self.initial_version)
        self._env: Env | None = None
        self._values: dict[str, Any] = {}

    # -- one line --------------------------------------------------------------------------------

    def handle(self, line: str) -> str:
        text = line.strip()
        if not text:
            return ""
        try:
            if text.startswith("%"):
                name, _, rest = text[1:].partition(" ")
                command = COMMANDS.get(name)
                if command is None:
                    raise CommandError(f"unknown command %{name}; %help lists them")
                return command.run(self, rest.strip())
            return self.evaluate(text)
        except CompileError as err:
            return str(err)
        except (CelError, CommandError, ValueError, OSError) as err:
            return f"error: {err}"

    def evaluate(self, text: str) -> str:
        program = self.env().compile(text)
        activation = self.activation()
        costed = self.state.schema is not None or self.state.admission is not None
        missing = self.missing_values(program, activation)
        if missing and costed:  # a rule being written: its type and estimated cost need no value
            return f"{missing} : {program.output_type}\n{self.cost_line(program, None)}"
        if missing:
            raise CommandError(missing)
        value, cost = program.evaluate_with_cost(activation, cost_limit=RUNTIME_COST_LIMIT)
        lines = [f"{cel_text(value)} : {result_type(program.output_type, value)}"]
        if costed:
            lines.append(self.cost_line(program, cost))
        return "\n".join(lines)

    def missing_values(self, program: Program, activation: Mapping[str, Any]) -> str:
        """What the expression reads that has no value yet, and the command that gives one ("" when none)."""
        missing = sorted(name for name in program.variables if name not in activation)
        how = "; ".join(f"{n}: {_VALUE_COMMANDS.get(n, '%let ' + n + ' =')} …" for n in missing)
        return f"no value for {', '.join(missing)} ({how})" if missing else ""

    def cost_line(self, program: Program, cost: int | None) -> str:
        """The runtime cost (when evaluated) and the estimate, with the schema's cardinality when a CRD is loaded."""
        from kcel.k8s.rules.cost import STATIC_ESTIMATED_COST_LIMIT, SchemaSizes, max_cardinality, times_cardinality

        schema = self.state.schema
        text = f"cost: {cost:,} (runtime limit {RUNTIME_COST_LIMIT:,})" if cost is not None else "cost: not run"
        if program.variables & set(self.state.lets):
            return f"{text}; no estimate: the expression reads %let variables (inline them to estimate the rule)"
        estimate = self.env().estimate_cost(program, SchemaSizes(schema.decl) if schema is not None else None)
        text += f"; estimated {estimate.min:,}..{estimate.max:,}"
        if schema is None:
            return text
        bounded = schema.cardinality is not None
        runs = schema.cardinality if schema.cardinality is not None else max_cardinality(schema.decl.min_size)
        total = times_cardinality(estimate.max, runs)
        share = 100 * total / STATIC_ESTIMATED_COST_LIMIT
        verdict = "" if total <= STATIC_ESTIMATED_COST_LIMIT else "; the API server would reject this rule"
        return (f"{text} x {runs:,}{'' if bounded else ' (unbounded)'} runs = {total:,} "
                f"({share:.2f}% of the {STATIC_ESTIMATED_COST_LIMIT:,} limit{verdict})")  # fmt: skip

    # -- the environment -------------------------------------------------------------------------

    def env(self) -> Env:
        """The environment for the next expression (rebuilt only after a command changed the state)."""
        if self._env is None:
            self._env, self._values = self._build()
        return self._env

    def activation(self) -> dict[str, Any]:
        self.env()
        return dict(self._values)

    def changed(self) -> None:
        self._env = None
        self.env()  # a `%let` that no longer compiles is reported by the command that broke it

    def _build(self) -> tuple[Env, dict[str, Any]]:
        state = self.state
        base = self._base_env()
        variables: dict[str, str | CelType] = {**base.variables, **state.declarations}
        values: dict[str, Any] = {}
        if state.schema is not None:
            variables |= {"self": state.schema.decl.cel, "oldSelf": state.schema.decl.cel}
            values |= _schema_values(state.schema)
        if state.admission is not None:
            variables |= ADMISSION_VARIABLES
            values |= {k: v for k, v in state.admission.items() if v is not None or k != "request"}
            values["authorizer"] = _authorizer(state.admission.get("request"))
        library = Library("repl", overloads=tuple(self._overloads(base, variables, values)))
        env = Env(variables, container=state.container, libraries=[*base.libraries, library],
                  macros=base.macros, k8s_version=state.k8s_version)  # fmt: skip
        for let in state.lets.values():
            program = env.compile(let.expression)
            value = program.evaluate(values)
            declared = parse_type(let.declared) if let.declared else program.output_type
            values[let.name] = value
            env = env.extend({let.name: declared})
        return env, values

    def _base_env(self) -> Env:
        if self.state.environment is not None:
            from kcel.k8s.surfaces.environments import environment

            base = environment(self.state.environment, self.state.k8s_version)
        elif self.state.schema is not None:
            from kcel.k8s.rules.validation import RuleEnvironments

            base = RuleEnvironments(self.state.k8s_version).base
        else:
            base = Env(k8s_version=self.state.k8s_version)
        return base if self.messages is None else base.extend({}, [self.messages])

    def _overloads(
        self, base: Env, variables: Mapping[str, str | CelType], values: Mapping[str, Any]
    ) -> Iterator[Overload]:
        for function in self.state.functions.values():
            params = tuple(parse_type(t) for _, t in function.params)
            result = parse_type(function.result)
            ident = f"repl_{function.name}_" + "_".join(str(p) for p in params)
            impl: Callable[..., Any] = _undefined(function.name)
            if function.body is not None:
                scope = {**variables, **dict(zip([n for n, _ in function.params], params, strict=True))}
                body = Env(scope, container=self.state.container, libraries=base.libraries, macros=base.macros,
                           k8s_version=self.state.k8s_version).compile(function.body)  # fmt: skip
                names = [n for n, _ in function.params]
                impl = _implementation(body, names, values)
            yield Overload(ident, function.name, params, result, impl)

    # -- completion ------------------------------------------------------------------------------

    def completions(self, before_cursor: str) -> list[str]:
        """Words that can follow the text before the cursor: commands, variables, functions, macros, fields."""
        if before_cursor.startswith("%") and " " not in before_cursor:
            return sorted(f"%{name}" for name in COMMANDS if f"%{name}".startswith(before_cursor))
        match = re.search(rf"((?:{_IDENT}\.)*)({_IDENT})?\Z", before_cursor)
        prefix, partial = (match.group(1), match.group(2) or "") if match else ("", "")
        if prefix:
            words = self._members(prefix[:-1])
        else:
            env = self.env()
            functions = {o.function for lib in env.libraries for o in lib.overloads if not o.member}
            words = {*env.variables, *functions, *MACROS, *KEYWORDS}
        return sorted(w for w in words if w.startswith(partial) and not w.startswith(("_", "@", "!")))

    def _members(self, receiver: str) -> set[str]:
        """Field names of what `receiver` is (from the schema type, else from its value) and its member functions."""
        env = self.env()
        try:
            program = env.compile(receiver)
        except CelError:
            return set()
        receiver_type = program.output_type
        members = {
            o.function for lib in env.libraries for o in lib.overloads
            if o.member and _may_receive(o.args[0], receiver_type)
        }  # fmt: skip
        decl = receiver_type.decl
        if decl is not None and getattr(decl, "fields", None):
            return members | set(decl.fields)
        try:
            value = program.evaluate(self.activation())
        except CelError:
            return members
        if isinstance(value, Mapping):
            return members | {k for k in value if isinstance(k, str) and re.fullmatch(_IDENT, k)}
        return members


def _may_receive(parameter: CelType, receiver: CelType) -> bool:
    """Whether a member function taking `parameter` may apply to a receiver of this type (dyn: all may)."""
    return receiver.name == "dyn" or parameter.is_param or parameter.name in ("dyn", receiver.name)


# -- commands ------------------------------------------------------------------------------------

RUNTIME_COST_LIMIT = 1_000_000  # the API server's per-expression runtime limit
_VALUE_COMMANDS = {
    "self": "%object", "oldSelf": "%old", "object": "%object", "oldObject": "%old", "params": "%params",
    "request": "%object",
}  # fmt: skip

ADMISSION_VARIABLES: dict[str, str | CelType] = {
    "object": DYN, "oldObject": DYN, "request": DYN, "params": DYN, "namespaceObject": DYN,
    "authorizer": "kubernetes.authorization.Authorizer",
}  # fmt: skip


def _let(session: Session, rest: str) -> str:
    function = _FUNCTION.match(rest)
    if function and function.group(4) is not None:
        defined = _function(function.group(1), function.group(2), function.group(3), function.group(4))
        return _define_function(session, defined)
    match = _LET.match(rest)
    if match is None:
        raise CommandError("usage: %let NAME [: TYPE] = EXPR  or  %let NAME(PARAM: TYPE, ...): TYPE -> EXPR")
    name, declared, expression = match.groups()
    if declared is not None:  # a type no one declares is an error, and the value must be of the type declared
        wanted = session.env().extend({name: declared}).variables[name]
        found = session.env().compile(expression).output_type
        if not is_assignable(wanted, found, Substitution()):
            raise CommandError(f"{name}: expected type '{wanted}' but found '{found}'")
    previous = dict(session.state.lets)
    session.state.lets[name] = Let(name, expression.strip(), declared)  # a redefinition keeps its place
    try:
        session.changed()
    except CelError:
        session.state.lets = previous
        session.changed()
        raise
    value = session.activation()[name]
    return f"{name} = {cel_text(value)} : {session.env().variables[name]}"


def _define_function(session: Session, function: Function) -> str:
    if any(session.env().overloads(function.name)) and function.name not in session.state.functions:
        raise CommandError(f"{function.name} is a library function; give yours another name")
    previous = dict(session.state.functions)
    session.state.functions[function.name] = function
    try:
        session.changed()
    except CelError:
        session.state.functions = previous
        session.changed()
        raise
    return f"defined {function.signature}"


def _function(name: str, params_text: str, result: str, body: str | None) -> Function:
    params = []
    for param in filter(None, (p.strip() for p in _split_params(params_text))):
        declared = _DECLARE.match(param)
        if declared is None:
            raise CommandError(f"a parameter is NAME: TYPE, got {param!r}")
        parse_type(declared.group(2))
        params.append((declared.group(1), declared.group(2)))
    parse_type(result)
    return Function(name, tuple(params), result, body.strip() if body else None)


def _split_params(text: str) -> list[str]:
    """Split on the commas between parameters, not those inside `map(string, int)`."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _declare(session: Session, rest: str) -> str:
    function = _FUNCTION.match(rest)
    if function and function.group(4) is None and "(" in rest.split(":")[0]:
        return _define_function(session, _function(function.group(1), function.group(2), function.group(3), None))
    match = _DECLARE.match(rest)
    if match is None:
        raise CommandError("usage: %declare NAME: TYPE  or  %declare NAME(PARAM: TYPE, ...): TYPE")
    name, type_name = match.groups()
    session.env().extend({name: type_name})  # a type no one declares is an error naming it
    session.state.declarations[name] = type_name
    session.changed()
    return f"declared {name}: {type_name}"


def _delete(session: Session, rest: str) -> str:
    """Remove a name, unless a definition still uses it (the session would no longer build): then nothing changes."""
    state = session.state
    tables: tuple[dict[str, Any], ...] = (state.lets, state.declarations, state.functions)
    for table in tables:
        if rest in table:
            kept = dict(table)
            del table[rest]
            try:
                session.changed()
            except CelError:
                table.clear()
                table.update(kept)  # in the same order: later definitions may use earlier ones
                session.changed()
                users = [n for n, let in state.lets.items() if re.search(rf"\b{re.escape(rest)}\b", let.expression)]
                raise CommandError(f"{', '.join(users) or 'a definition'} uses {rest}: delete that first") from None
            return f"deleted {rest}"
    raise CommandError(f"nothing named {rest!r}; %status lists what is defined")


def _status(session: Session, rest: str) -> str:
    state = session.state
    lines = [f"kubernetes version: {state.k8s_version}"]
    if state.container:
        lines.append(f"container: {state.container}")
    if state.schema is not None:
        schema = state.schema
        where = ".".join(schema.path) or "<root>"
        lines.append(f"schema: {schema.crd.name} {schema.version} at {where} (self, oldSelf)")
        lines.append(f"  object: {'set' if schema.object is not None else 'none'}; "
                     f"old object: {'set' if schema.old is not None else 'none'}")  # fmt: skip
    if state.admission is not None:
        set_names = [n for n, v in state.admission.items() if v is not None]
        lines.append(f"admission: object, oldObject, request, params, namespaceObject ({', '.join(set_names)} set)")
    lines += [f"%declare {name}: {t}" for name, t in state.declarations.items()]
    lines += [f"%let {f.signature}" for f in state.functions.values()]
    lines += [f"%let {let.name}{f': {let.declared}' if let.declared else ''} = {let.expression}"
              for let in state.lets.values()]  # fmt: skip
    return "\n".join(lines)


def _reset(session: Session, rest: str) -> str:
    session.state = State(k8s_version=session.initial_version)
    session.changed()
    return "reset"


def _option(session: Session, rest: str) -> str:
    words = shlex.split(rest)
    if len(words) != 2 or words[0] not in ("--container", "--k8s-version", "--env"):
        raise CommandError("usage: %option --container NAME, --k8s-version 1.N or --env NAME")
    state = session.state
    previous = state.container, state.k8s_version, state.environment
    if words[0] == "--container":
        state.container = words[1]
    elif words[0] == "--env":
        state.environment = words[1]
    else:
        state.k8s_version = words[1]
    try:
        session.changed()
    except (CelError, ValueError):
        state.container, state.k8s_version, state.environment = previous
        session.changed()
        raise
    return f"{words[0][2:]}: {words[1]}"


def _parse(session: Session, rest: str) -> str:
    return dump(parse(rest, macros=session.env().macros))


def _compile(session: Session, rest: str) -> str:
    program = session.env().compile(rest)
    return f"type: {program.output_type}\n{program.python_source}"


def _explain(session: Session, rest: str) -> str:
    explanation = session.env().compile(rest).explain(session.activation())
    return explanation.text()


def _load(session: Session, rest: str) -> str:
    from kcel.k8s.crds.crd import load_crds

    words = shlex.split(rest)
    if not words:
        raise CommandError("usage: %load CRD.yaml [--version NAME] [--path spec.field]")
    options = dict(zip(words[1::2], words[2::2], strict=False))
    unknown = set(options) - {"--version", "--path"}
    if unknown or len(words) % 2 == 0:
        raise CommandError("usage: %load CRD.yaml [--version NAME] [--path spec.field]")
    crds = load_crds(_existing(words[0]))
    if not crds:
        raise CommandError(f"{words[0]} holds no CustomResourceDefinition")
    crd = crds[0]
    names = [v.name for v in crd.versions]
    version = options.get("--version") or next((v.name for v in crd.versions if v.storage), names[0])
    if version not in names:
        raise CommandError(f"{crd.name} has no version {version!r} (it has {', '.join(names)})")
    path = tuple(p for p in options.get("--path", "").split(".") if p)
    session.state.schema = _schema_context(crd, version, path)
    session.changed()
    decl = session.state.schema.decl
    return f"loaded {crd.name} {version}; self and oldSelf: {decl.cel} at {'.'.join(path) or '<root>'}"


def _schema_context(crd: Any, version: str, path: tuple[str, ...]) -> SchemaContext:
    from kcel.k8s.rules.cost import child_cardinality, max_elements
    from kcel.k8s.schemas.decltypes import schema_decl_type

    schema = crd.schema_of(crd.version(version))
    if schema is None:
        raise CommandError(f"{crd.name} {version} has no schema")
    cardinality: int | None = 1
    for step in path:
        match = _PATH_STEP.fullmatch(step)
        if match is None:
            raise CommandError(f"--path: {step!r} is not a field name (a list's items: name[0])")
        name, indexes = match.groups()
        if schema.properties is not None and name in schema.properties:
            schema = schema.properties[name]
        elif isinstance(schema.additional_properties, type(schema)):
            cardinality = child_cardinality(cardinality, max_elements(schema))
            schema = schema.additional_properties
        else:
            raise CommandError(f"--path: the schema has no field {name!r} there")
        for _ in range(indexes.count("[")):
            if schema.items is None:
                raise CommandError(f"--path: {name} is not a list")
            cardinality = child_cardinality(cardinality, max_elements(schema))
            schema = schema.items
    decl = schema_decl_type(schema, is_resource_root=not path)
    if decl is None:
        raise CommandError("rules cannot be written at that node: the schema does not give it a CEL type")
    return SchemaContext(crd, version, path, decl, cardinality)


def _schema_values(schema: SchemaContext) -> dict[str, Any]:
    from kcel.k8s.schemas.values import convert

    values = {}
    for name, obj in (("self", schema.object), ("oldSelf", schema.old)):
        if obj is not None:
            data = _at_path(obj, schema.path)
            values[name] = convert(data, schema.decl)
    return values


def _at_path(obj: Any, path: tuple[str, ...]) -> Any:
    data = obj
    for step in path:
        match = _PATH_STEP.fullmatch(step)
        assert match is not None  # checked by %load
        name, indexes = match.groups()
        if not isinstance(data, Mapping) or name not in data:
            raise CommandError(f"the object has no {'.'.join(path)}")
        data = data[name]
        for index in re.findall(r"\d+", indexes):
            if not isinstance(data, list) or int(index) >= len(data):
                raise CommandError(f"the object has no {'.'.join(path)}")
            data = data[int(index)]
    return data


def _object_command(which: str) -> Callable[[Session, str], str]:
    def command(session: Session, rest: str) -> str:
        document = _document(rest)
        if session.state.admission is not None:
            key = "object" if which == "object" else "oldObject"
            session.state.admission[key] = document
            session.state.admission["request"] = _request(session.state.admission)
            session.changed()
            return f"{key} set from {rest}"
        if session.state.schema is None:
            raise CommandError(f"%{'object' if which == 'object' else 'old'} needs %load CRD.yaml or %admission first")
        previous = session.state.schema.object, session.state.schema.old
        setattr(session.state.schema, which, document)
        try:
            session.changed()
        except (CelError, CommandError):
            session.state.schema.object, session.state.schema.old = previous
            session.changed()
            raise
        return f"{'self' if which == 'object' else 'oldSelf'} set from {rest}"

    return command


def _params(session: Session, rest: str) -> str:
    if session.state.admission is None:
        raise CommandError("%params needs %admission first")
    session.state.admission["params"] = _document(rest)
    session.changed()
    return f"params set from {rest}"


def _admission(session: Session, rest: str) -> str:
    session.state.admission = {name: None for name in ADMISSION_VARIABLES}
    session.state.schema = None
    session.state.admission["request"] = _request(session.state.admission)
    session.changed()
    return (
        "admission mode: object, oldObject, request, params, namespaceObject, authorizer (set them with %object, "
        "%old, %params)"
    )


def _authorizer(request: Mapping[str, Any] | None) -> Any:
    """The `authorizer` of admission mode: the request's user, asking RBAC with no bindings (no opinion: checks are
    not allowed), as `kcel admit` without --rbac does."""
    from kcel.k8s.authorization.rbac import RBACAuthorizer
    from kcel.libs.k8s_authz import UserInfo, authorizer_value

    user = (request or {}).get("userInfo") or {}
    info = UserInfo(str(user.get("username", "")), "", tuple(user.get("groups", ())))
    return authorizer_value(RBACAuthorizer(), info)


def _request(admission: Mapping[str, Any]) -> dict[str, Any] | None:
    """The AdmissionRequest the API server would send: a create of `object`, an update when oldObject is set too,
    a delete when only oldObject is; the request variable holds it without the objects themselves."""
    from kcel.k8s.admission import RequestError, request_from_objects
    from kcel.k8s.admission.identity import DEFAULT_USER, authenticated_groups

    obj, old = admission.get("object"), admission.get("oldObject")
    if obj is None and old is None:
        return None
    try:
        request = request_from_objects(obj, old, operation="DELETE" if obj is None else None, user=DEFAULT_USER,
                                       groups=authenticated_groups(()))  # fmt: skip
    except RequestError as err:
        raise CommandError(str(err)) from None
    return {k: v for k, v in request.items() if k not in ("object", "oldObject")}


def _rules(session: Session, rest: str) -> str:
    from kcel.k8s.crds.objects import validate_object

    schema = session.state.schema
    if schema is None or schema.object is None:
        raise CommandError("%rules needs %load CRD.yaml and %object OBJECT.yaml first")
    result = validate_object(schema.crd, schema.object, schema.old)
    lines = [result.message or f"valid: the API server would accept this {'update' if schema.old else 'create'}"]
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def _help(session: Session, rest: str) -> str:
    lines = ["Type a CEL expression to see its value and type. Commands:"]
    lines += [f"  {c.usage:<48} {c.summary}" for c in COMMANDS.values()]
    lines.append("Enter with unbalanced brackets continues the line; Ctrl-C cancels it; Ctrl-D exits.")
    return "\n".join(lines)


def _exit(session: Session, rest: str) -> str:
    raise EOFError


def _document(path: str) -> Any:
    from kcel.k8s.crds.crd import load_documents

    if not path:
        raise CommandError("name a YAML or JSON file")
    documents = load_documents(_existing(path))
    if len(documents) != 1:
        raise CommandError(f"{path} holds {len(documents)} documents; give a file with one")
    return documents[0]


def _existing(path: str) -> str:
    if not Path(path).is_file():
        raise CommandError(f"{path}: no such file")
    return path


def _implementation(body: Program, names: list[str], values: Mapping[str, Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        return body.evaluate({**values, **dict(zip(names, args, strict=True))})

    return call


def _undefined(name: str) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        raise EvalError(f"function {name} is declared but has no definition (%let {name}(...): TYPE -> EXPR)")

    return call


COMMANDS: dict[str, _Command] = {
    "let": _Command(_let, "%let NAME [: TYPE] = EXPR", "define a variable (or NAME(x: T): T -> EXPR, a function)"),
    "declare": _Command(_declare, "%declare NAME: TYPE", "declare a variable's type (or a function's signature)"),
    "delete": _Command(_delete, "%delete NAME", "remove a variable or function"),
    "status": _Command(_status, "%status", "show the options, declarations and definitions"),
    "reset": _Command(_reset, "%reset", "forget everything"),
    "option": _Command(
        _option,
        "%option --container NAME | --k8s-version 1.N | --env NAME",
        "set an option; --env: webhook-match, dra-selector, authn-claims, … (kcel eval --help)",
    ),
    "parse": _Command(_parse, "%parse EXPR", "show the AST, with node ids"),
    "compile": _Command(_compile, "%compile EXPR", "show the checked type and the generated Python"),
    "explain": _Command(_explain, "%explain EXPR", "show every subexpression's value and what decided the result"),
    "load": _Command(_load, "%load CRD.yaml [--version V] [--path spec.x]", "bind self/oldSelf to a schema node"),
    "object": _Command(_object_command("object"), "%object OBJECT.yaml", "the object (self, or object)"),
    "old": _Command(_object_command("old"), "%old OBJECT.yaml", "the old object (oldSelf, or oldObject)"),
    "rules": _Command(_rules, "%rules", "run the CRD's own rules on the object, with the API server's messages"),
    "admission": _Command(_admission, "%admission", "bind object, oldObject, request, params, namespaceObject"),
    "params": _Command(_params, "%params PARAMS.yaml", "the params object (admission mode)"),
    "help": _Command(_help, "%help", "this list"),
    "exit": _Command(_exit, "%exit", "leave (or Ctrl-D)"),
}
