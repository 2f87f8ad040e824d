"""Dynamic Resource Allocation device selectors (`cel.expression` of a DeviceClass's selectors and of a ResourceClaim's
or ResourceClaimTemplate's requests, `exactly` or `firstAvailable`), as Kubernetes 1.31-1.37 compile and run them.

k8s.io/dynamic-resource-allocation `cel/compile.go`: the `device` variable (`driver`; `attributes` and `capacity`,
maps of domain -> name -> value, a name without a domain being in the driver's; `allowMultipleAllocations` from 1.34),
`cel.bind`, a result of type bool or an attribute's. The API server checks selectors on create
(pkg/apis/resource/validation `validateSelector`: 32 selectors, 10 KiB and an estimated cost of 1,000,000 from 1.32)
in the environment for new expressions; the scheduler (structured allocator `selectorsMatch`, `DeviceMatches`) runs
them in the one for stored expressions, under the same cost limit. Feature gates change what the device holds
(`feature_gates={"DRAListTypeAttributes": True}`); by default each release's defaults apply.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

from kcel.checker.checker import check as check_types
from kcel.checker.decls import CallEstimate, CostEstimate, Library, Overload, SizeEstimate
from kcel.checker.types import ANY, BOOL, DYN, STRING, CelType, map_of
from kcel.env import Env
from kcel.errors import CompileError, EvalError, Issue, PlanError
from kcel.eval import runtime
from kcel.eval.program import Program
from kcel.k8s import field as fe
from kcel.k8s.admission import served
from kcel.k8s.admission.compilation import ObjectType
from kcel.k8s.admission.served import needs_switching_on, switched_on
from kcel.k8s.environment import Version, server_version
from kcel.k8s.surfaces import Checked
from kcel.libs import k8s_lists, k8s_semver, unit_cost, unit_estimate
from kcel.libs.k8s_quantity import QUANTITY_TYPE, QuantityError, parse_quantity
from kcel.parser import parse
from kcel.parser.ast import Comprehension, Expr, walk
from kcel.parser.macros import BINDINGS
from kcel.values import Optional

__all__ = [
    "ENVIRONMENTS", "KINDS", "Compiled", "DeviceResult", "RequestResult", "Selection", "check", "compile_selector",
    "device_matches", "device_value", "select_devices", "selector_env",
]  # fmt: skip

GROUP = "resource.k8s.io"
KINDS: tuple[tuple[str, str], ...] = tuple(
    (GROUP, kind) for kind in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate")
)
SELECTORS_MAX = 32  # DeviceSelectorsMaxSize
EXPRESSION_MAX_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength, in bytes
EXPRESSION_MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost: the create-time estimate and the runtime limit
ATTRIBUTE_VALUES_MAX = 48  # ResourceSliceMaxAttributeValuesPerDevice: `includes` refuses longer lists
# apiVersion -> (first release serving these kinds, first release no longer serving them). All but v1 are served
# only when switched on (--runtime-config), and before 1.34 only with the DynamicResourceAllocation gate, off by
# default while alpha (1.26-1.31) and beta (1.32-1.33): kcel.k8s.admission.served says so.
DRA_GATE, DRA_GA = "DynamicResourceAllocation", (1, 34)
_SERVED: dict[str, tuple[Version, Version]] = {
    "v1alpha3": ((1, 31), (1, 33)), "v1beta1": ((1, 32), (99, 0)), "v1beta2": ((1, 33), (99, 0)),
    "v1": ((1, 34), (99, 0)),
}  # fmt: skip
# gate -> (first release that has it, first release enabling it by default)
_GATES: dict[str, tuple[Version, Version]] = {
    "DRAConsumableCapacity": ((1, 34), (1, 36)), "DRAListTypeAttributes": ((1, 36), (99, 0)),
    "DRAPrioritizedList": ((1, 33), (1, 34)),
}  # fmt: skip
_CC, _LT, _PL = "DRAConsumableCapacity", "DRAListTypeAttributes", "DRAPrioritizedList"
# Fields of a flat (v1alpha3, v1beta1) request that make it an `exactly` request (hasAnyMainRequestFieldsSet).
Gates = Mapping[str, bool] | None
Obj = Mapping[str, Any]
_MAIN_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations")


# -- what one API server's selectors see ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Setup:
    """One environment: a release, new (create) or stored (scheduler) expressions, the gates enabled, and so what
    the device holds: `allowMultipleAllocations` (1.34; new expressions with its gate), attributes typed dyn rather
    than `any` so that macros range over list attributes (with its gate; from 1.37 also stored), list attributes
    handed to CEL (1.36 with the gate; from 1.37)."""

    version: Version
    stored: bool
    gates: frozenset[str]
    multiple_allocations: bool = False
    list_attributes: bool = False
    list_values: bool = False


def _setup(k8s_version: str | None, stored: bool, feature_gates: Gates) -> _Setup:
    version = server_version(k8s_version)
    if version < (1, 31):
        raise ValueError(f"Kubernetes 1.{version[1]} has no device selectors: DeviceClass arrived in 1.31")
    enabled = {gate for gate, (_, on) in _GATES.items() if version >= on}
    for gate, on in (feature_gates or {}).items():
        if gate not in _GATES:
            raise ValueError(f"unknown feature gate {gate!r}: kcel models {', '.join(_GATES)}")
        (enabled.add if on and version >= _GATES[gate][0] else enabled.discard)(gate)
    lists = _LT in enabled
    return _Setup(
        version, stored, frozenset(enabled), version >= (1, 34) and (stored or _CC in enabled),
        lists or (version >= (1, 37) and stored), version >= (1, 37) or lists,
    )  # fmt: skip


# -- the environment ------------------------------------------------------------------------------------------------

_ANY = ANY  # apiservercel.AnyType: dyn to the type checker, but no comprehension ranges over it


def _no_any_ranges(root: Expr, types: Mapping[int, CelType], _: Mapping[int, tuple[str, ...]]) -> list[Issue]:
    """cel-go's checker ranges over lists, maps and dyn only: a macro on an `any` attribute is a compile error."""
    message = "expression of type 'any' cannot be range of a comprehension (must be list, map, or dynamic)"
    ranges = [node.iter_range for node in walk(root) if isinstance(node, Comprehension)]
    return [Issue(message, node.pos, node.id) for node in ranges if types.get(node.id) == _ANY]


def _includes(target: Any, value: Any) -> bool:
    """1.36's includesFunc: membership in a list attribute of at most 48 values, else equality; an equality that
    fails (a version against a string) is not equality."""
    items = target if isinstance(target, Sequence) and not isinstance(target, (str, bytes)) else None
    for position, item in enumerate(items if items is not None else (target,)):
        if items is not None and position >= ATTRIBUTE_VALUES_MAX:
            raise EvalError(f"'includes' function cannot be applied to lists longer than {ATTRIBUTE_VALUES_MAX} values")
        try:
            if runtime.equals(item, value):
                return True
        except EvalError:
            pass
    return False


_INCLUDES = Overload(
    "dra_includes_dyn_dyn", "includes", (DYN, DYN), BOOL, _includes, member=True, doc='x.models.includes("a100")',
    estimate=lambda call: CallEstimate(CostEstimate(0, ATTRIBUTE_VALUES_MAX)),  # draCostEstimator: like `in`
)  # fmt: skip
# Until 1.33 Kubernetes' cost model knew no semver() or isSemver(): cel-go's default cost of 1 applied.
_UNPRICED_SEMVER = replace(k8s_semver.library(0), overloads=tuple(
    replace(o, cost=unit_cost, estimate=unit_estimate) if o.function in ("semver", "isSemver") else o
    for o in k8s_semver.library(0).overloads
))  # fmt: skip


@cache
def _environment(setup: _Setup) -> Env:
    """The release's base environment plus compile.go's options: the device, `cel.bind`, `includes`, semver."""
    base = Env(k8s_version=f"1.{setup.version[1]}", environment="stored" if setup.stored else "new")
    # `includes`: DRA's own in 1.36 (stored whatever the gate); from 1.37 the lists library's (kubernetes#140016),
    # which the base environment has for stored expressions, and DRA adds for new ones with the gate.
    includes: tuple[Overload, ...] = ()
    if setup.version == (1, 36) and (setup.stored or _LT in setup.gates):
        includes = (_INCLUDES,)
    elif setup.version >= (1, 37) and not setup.stored and _LT in setup.gates:
        includes = k8s_lists.VERSION_1
    libraries = [Library("kubernetes.DRA", includes, validators=(_no_any_ranges,))]
    if setup.version <= (1, 32):  # DRA's own semver library (1.31), then library.SemverLib v0 (1.32)
        libraries.append(_UNPRICED_SEMVER)
    elif setup.version == (1, 33) and not setup.stored:  # until the base environment's (1.33) is rollback-safe
        libraries.append(k8s_semver.library(0))
    attribute, capacity = DYN if setup.list_attributes else _ANY, map_of(STRING, map_of(STRING, QUANTITY_TYPE))
    fields = {"driver": STRING, "attributes": map_of(STRING, map_of(STRING, attribute)), "capacity": capacity}
    if setup.multiple_allocations:
        fields["allowMultipleAllocations"] = BOOL
    env = base.extend({"device": ObjectType("kubernetes.DRADevice", fields).cel}, libraries)  # values: plain dicts
    env.macros = (*env.macros, *BINDINGS)
    return env


# compile.go sizeEstimator (1.33+), over `device` paths: MaxElements of each DeclType (DeviceMaxDomainLength,
# DeviceMaxIDLength, ResourceSliceMaxAttributesAndCapacitiesPerDevice, DeviceAttributeMaxValueLength...); any name
# or value under a domain's attribute map is an attribute, of at most 64 (also as a list: the larger of 64 and 48).
_SIZES: dict[tuple[str, ...], int] = {
    (): 0, ("driver",): 63, ("allowMultipleAllocations",): 1, ("attributes",): 32, ("capacity",): 32,
    ("attributes", "@keys"): 63, ("capacity", "@keys"): 63, ("attributes", "@values"): 32, ("capacity", "@values"): 32,
    ("attributes", "@values", "@keys"): 32, ("capacity", "@values", "@keys"): 32, ("attributes", "@values", "*"): 64,
    ("capacity", "@values", "@values"): 0,
}  # fmt: skip


class _DeviceSizes:
    def estimate_size(self, path: tuple[str, ...], type: CelType) -> SizeEstimate | None:
        steps = tuple("@values" if step == "@items" else step for step in path[1:])
        if steps[:2] == ("attributes", "@values") and len(steps) == 3 and steps[2] != "@keys":
            steps = (*steps[:2], "*")
        found = _SIZES.get(steps) if path[:1] == ("device",) else None
        return None if found is None else SizeEstimate(0, found)


# -- compiling ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Compiled:
    """CompileCELExpression's result: the program, or upstream's error detail (`internal`: of type Internal, else
    Invalid), and the worst-case cost estimate (None where upstream makes none: 1.31, the scheduler)."""

    expression: str
    program: Program | None
    error: str = ""
    internal: bool = False
    max_cost: int | None = None


def selector_env(k8s_version: str | None = None, *, stored: bool = False, feature_gates: Gates = None) -> Env:
    """The environment selectors compile in on create (`stored=False`) or in the scheduler (`stored=True`)."""
    return _environment(_setup(k8s_version, stored, feature_gates))


def compile_selector(
    expression: str,
    k8s_version: str | None = None,
    *,
    stored: bool = False,
    feature_gates: Gates = None,
) -> Compiled:
    """Compile one selector as that API server does on create (`stored=True`: as its scheduler does), with the cost
    estimate the API server would make."""
    setup = _setup(k8s_version, stored, feature_gates)
    return _compile(setup, expression, setup.version >= (1, 32))


@lru_cache(maxsize=1024)  # the scheduler's cel.Cache: one compilation per expression text
def _compile(setup: _Setup, expression: str, estimate: bool) -> Compiled:
    env = _environment(setup)
    try:
        parsed = parse(expression, macros=env.macros)
        checked = check_types(parsed, env)
    except CompileError as err:
        return Compiled(expression, None, f"compilation failed: {err.render()}")
    attribute = DYN if setup.list_attributes else _ANY  # besides bool; 1.36 also accepted `any` beside dyn
    if checked.output_type not in {BOOL, attribute, *((_ANY,) if setup.version < (1, 37) else ())}:
        return Compiled(expression, None, f"must evaluate to bool or the unknown type, not {checked.output_type}")
    try:
        program = Program(parsed, env, checked, env.optimize)
    except PlanError as err:
        return Compiled(expression, None, f"program instantiation failed: {err}", internal=True)
    if not estimate:
        return Compiled(expression, program)
    sizes = _DeviceSizes() if setup.version >= (1, 33) else None  # 1.32 estimated without sizes
    return Compiled(expression, program, max_cost=env.estimate_cost(program, sizes).max)


# -- checking objects on create -------------------------------------------------------------------------------------


class _Malformed(Exception):
    """A field of a type the API server would not have decoded: `args[0]` is its FieldError."""


def _want(value: Any, kind: type, path: fe.Path) -> Any:
    """A field's value when it has the JSON type the API declares, or None when absent; raises `_Malformed`."""
    if value is None or isinstance(value, kind):
        return value
    names: dict[type, str] = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}
    wanted, got = names.get(kind, "an object"), names.get(type(value), "an object")
    raise _Malformed(fe.type_invalid(path, fe.OMIT, f"expected {wanted}, not {got}"))


def _get(parent: Any, key: str) -> Any:
    return parent.get(key) if isinstance(parent, Mapping) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def check(
    document: Obj, where: str, k8s_version: str, *, feature_gates: Gates = None, runtime_config: Iterable[str] = ()
) -> Checked:
    """What the API server reports about the selectors of a DeviceClass, ResourceClaim or ResourceClaimTemplate on
    create (only the selectors' validation is modelled). `where`, the document's origin, prefixes errors about the
    document as a whole; the others name their field, and a field of the wrong JSON type ends the check.
    `runtime_config`: the alpha and beta API versions assumed switched on (`resource.k8s.io/v1beta1`), with the
    feature gate they need; the others are refused as a cluster on its defaults refuses them."""
    if not isinstance(document, Mapping):
        return Checked("", "", 0, (f"{where}: not a Kubernetes object",))
    kind, name = _text(document.get("kind")), _text(_get(document.get("metadata"), "name"))
    group, _, api = _text(document.get("apiVersion")).rpartition("/")
    if (group, kind) not in KINDS:
        return Checked(kind, name, 0, (f"{where}: {kind or 'an object'} of {group or 'no group'} has no selectors",))
    first, gone = _SERVED.get(api, ((99, 0), (99, 0)))
    server = server_version(k8s_version)
    if not first <= server < gone:
        return Checked(kind, name, 0, (f'no matches for kind "{kind}" in version "{group}/{api}"',))
    if api != "v1" and not switched_on(f"{group}/{api}", served.runtime_config(runtime_config)):
        problem = needs_switching_on(f"{group}/{api}", kind, server, DRA_GATE if server < DRA_GA else None)
        return Checked(kind, name, 0, (f"{where}: {problem}",))
    run = _Check(_setup(k8s_version, False, feature_gates), api)
    with fe.answering_as(run.setup.version):
        try:
            run.object(kind, document)
        except _Malformed as err:
            run.errors.append(err.args[0])
    return Checked(kind, name, run.expressions, tuple(map(str, run.errors)), tuple(run.warnings))


class _Check:
    """One object's selectors, checked at the paths of the API server's internal type: requests are flat before 1.33,
    then under `exactly` whatever the apiVersion (v1beta1 requests convert into `exactly`)."""

    def __init__(self, setup: _Setup, api: str) -> None:
        self.setup, self.api, self.expressions = setup, api, 0
        self.errors: list[fe.FieldError] = []
        self.warnings: list[str] = []

    def object(self, kind: str, document: Obj) -> None:
        spec = _want(document.get("spec"), Mapping, path := fe.Path.new("spec"))
        if kind == "DeviceClass":
            return self.selectors(_get(spec, "selectors"), path.child("selectors"))
        if kind == "ResourceClaimTemplate":
            spec = _want(_get(spec, "spec"), Mapping, path := path.child("spec"))
        devices = _want(_get(spec, "devices"), Mapping, path.child("devices"))
        path = path.child("devices", "requests")
        for i, request in enumerate(_want(_get(devices, "requests"), list, path) or ()):
            self.request(_want(request, Mapping, path.index(i)) or {}, path.index(i))

    def request(self, request: Obj, here: fe.Path) -> None:
        if self.api in ("v1beta2", "v1"):
            exactly = _want(request.get("exactly"), Mapping, here.child("exactly"))
        else:
            exactly = request if any(request.get(f) not in (None, "", 0) for f in _MAIN_FIELDS) else None
        if exactly is not None:
            within = here.child("exactly") if self.setup.version >= (1, 33) else here
            self.selectors(exactly.get("selectors"), within.child("selectors"))
        options, path = request.get("firstAvailable"), here.child("firstAvailable")
        if options is not None and self.setup.version < (1, 33):
            self.warnings.append(f'unknown field "{path}"')
        elif options is not None and _PL not in self.setup.gates:
            self.warnings.append(f"{path}: dropped, the DRAPrioritizedList feature gate is off: not checked")
        else:
            for j, option in enumerate(_want(options, list, path) or ()):
                self.selectors(
                    _get(_want(option, Mapping, path.index(j)), "selectors"), path.index(j).child("selectors")
                )

    def selectors(self, value: Any, path: fe.Path) -> None:
        """validateSelectorSlice: too many is the only error (validateSlice short-circuits), else each selector."""
        selectors = _want(value, list, path) or []
        if len(selectors) > SELECTORS_MAX:
            return self.errors.append(fe.too_many(path, len(selectors), SELECTORS_MAX))
        for i, selector in enumerate(selectors):
            cel = _want(
                _get(_want(selector, Mapping, path.index(i)), "cel"), Mapping, here := path.index(i).child("cel")
            )
            if cel is None:
                self.errors.append(fe.required(here, ""))
                continue
            self.expressions += 1
            expression = _want(cel.get("expression"), str, here.child("expression")) or ""
            self.errors.extend(self.expression(expression, here.child("expression")))

    def expression(self, expression: str, path: fe.Path) -> list[fe.FieldError]:
        """validateCELSelector: the length (1.32+), compilation, then the estimated cost (1.32+)."""
        checks_cost = self.setup.version >= (1, 32)
        if checks_cost and len(expression.encode("utf-8", "surrogatepass")) > EXPRESSION_MAX_LENGTH:
            return [fe.too_long(path, EXPRESSION_MAX_LENGTH)]
        compiled = _compile(self.setup, expression, checks_cost)
        if compiled.error:
            detail = compiled.error
            return [fe.internal_error(path, detail) if compiled.internal else fe.invalid(path, expression, detail)]
        if compiled.max_cost is not None and compiled.max_cost > EXPRESSION_MAX_COST:
            return [fe.forbidden(path, "too complex, exceeds cost limit")]
        return []


# -- what a device looks like to CEL --------------------------------------------------------------------------------

_IN_OPERATOR = runtime.in_container.__code__


class _Domains(Mapping[str, Obj]):
    """`device.attributes` and `device.capacity`: upstream's mapper answers a domain the device lacks with an empty
    map (`device.attributes["x"].y` fails on `y`; `has(device.attributes.x)` is true), while the `in` operator, which
    asks the map's Contains, sees the device's domains only. kcel looks keys up alike for `[]` and `in`
    (`map_lookup`), so the caller's frame tells the `in` operator's lookup apart."""

    __slots__ = ("_domains",)

    def __init__(self, domains: dict[str, dict[str, Any]]) -> None:
        self._domains = domains

    def __getitem__(self, key: str) -> Obj:
        try:
            return self._domains[key]
        except (KeyError, TypeError):
            if sys._getframe(2).f_code is _IN_OPERATOR:
                raise KeyError(key) from None
            return {}

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) or key in self._domains

    def __iter__(self) -> Iterator[str]:
        return iter(self._domains)

    def __len__(self) -> int:
        return len(self._domains)

    def __repr__(self) -> str:
        return repr(self._domains)


def device_value(
    device: Obj, driver: str, k8s_version: str | None = None, *, feature_gates: Gates = None
) -> dict[str, Any] | str:
    """The `device` a ResourceSlice device (v1beta1 `basic`, or v1beta2/v1) is to the scheduler's selectors, or the
    error DeviceMatches fails with on it (`attribute gpu: parse semantic version: ...`). Names without a domain are
    in the driver's. Raises ValueError, naming the field, for a device the API server would have refused."""
    setup = _setup(k8s_version, True, feature_gates)
    try:
        with fe.answering_as(setup.version):
            return _device(device, driver, setup, fe.Path.new("device"))
    except _Malformed as err:
        raise ValueError(str(err)) from None


def _device(device: Any, driver: str, setup: _Setup, path: fe.Path) -> dict[str, Any] | str:
    fields = _want(device, Mapping, path) or {}
    if isinstance(fields.get("basic"), Mapping):
        fields, path = fields["basic"], path.child("basic")
    domains: tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]] = ({}, {})
    for kind, into in zip(("attributes", "capacity"), domains, strict=True):
        entries = _want(fields.get(kind), Mapping, path.child(kind)) or {}
        for name, entry in sorted(entries.items()):  # upstream meets them in Go's random map order
            domain, _, ident = name.partition("/") if "/" in name else (driver, "", name)
            here = path.child(kind).key(name)
            if kind == "attributes":
                value, failure = _attribute(entry, setup.list_values, here)
                if failure:
                    return f"attribute {name}: {failure}"
                into.setdefault(domain, {})[ident] = value
                continue
            quantity = entry.get("value") if isinstance(entry, Mapping) else entry  # v1alpha3: the entry itself
            try:
                number = isinstance(quantity, (int, float)) and not isinstance(quantity, bool)
                into.setdefault(domain, {})[ident] = parse_quantity(str(quantity) if number else _text(quantity))
            except QuantityError as err:
                raise _Malformed(fe.invalid(here, quantity, str(err))) from None
    multiple = fields.get("allowMultipleAllocations") is True and _CC in setup.gates  # only newer allocators pass it
    return {"driver": driver, "allowMultipleAllocations": multiple, "attributes": _Domains(domains[0]),
            "capacity": _Domains(domains[1])}  # fmt: skip


_ATTRIBUTE_FIELDS: tuple[tuple[str, type], ...] = (("int", int), ("bool", bool), ("string", str), ("version", str))


def _attribute(attribute: Any, list_values: bool, path: fe.Path) -> tuple[Any, str]:
    """getAttributeValue: the first value set, lists first where they exist, versions as semvers; or the error
    DeviceMatches reports."""
    attribute = _want(attribute, Mapping, path) or {}
    lists = tuple((f"{key}s", kind) for key, kind in _ATTRIBUTE_FIELDS) if list_values else ()
    for key, kind in (*lists, *_ATTRIBUTE_FIELDS):
        value, many = attribute.get(key), key.endswith("s")
        if value is None:
            continue
        items = _want(value, list, path.child(key)) if many else [value]
        if not all(isinstance(item, kind) and (kind is bool or not isinstance(item, bool)) for item in items):
            raise _Malformed(fe.type_invalid(path.child(key), fe.OMIT, f"expected {key} values"))
        if key.startswith("version"):
            try:
                items = [k8s_semver.parse(item) for item in items]
            except k8s_semver.SemverError as err:
                return None, f"parse semantic version: {err}"
        return (list(items) if many else items[0]), ""
    return None, "unsupported attribute value"


# -- running selectors on devices -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceResult:
    """A device (`driver/pool/device`) under selectors: whether all matched, the error if one failed on it, and the
    runtime cost of those that ran."""

    device: str
    matches: bool
    error: str = ""
    cost: int = 0


# Each result type's ConvertToNative(bool) error; Kubernetes' types say "type conversion error from 'Semver'".
_CONVERSIONS = {
    "int": "unsupported type conversion from 'int' to bool", "uint": "unsupported type conversion from 'uint' to bool",
    "string": "unsupported native conversion from string to 'bool'", "map": "type conversion error from map to 'bool'",
    "list": "type conversion error from list to 'bool'", "double": "type conversion error from Double to 'bool'",
    "bytes": "type conversion error from Bytes to 'bool'", "type": "type conversion not supported for 'type'",
    "null_type": "type conversion error from 'null_type' to 'bool'", "optional_type": "optional.none() dereference",
}  # fmt: skip


def device_matches(compiled: Compiled, device: Obj | str, device_id: str = "") -> DeviceResult:
    """DeviceMatches: evaluate a selector on a `device_value` under the runtime cost limit. A result other than a
    bool is an error, as is a device whose attributes CEL cannot hold."""
    if isinstance(device, str) or compiled.program is None:
        return DeviceResult(device_id, False, device if isinstance(device, str) else compiled.error)
    try:
        value, cost = compiled.program.evaluate_with_cost({"device": device}, EXPRESSION_MAX_COST)
    except EvalError as err:
        return DeviceResult(device_id, False, str(err), err.cost or 0)
    while isinstance(value, Optional) and value.has_value():
        value = value.value  # an optional converts as the value it holds
    if isinstance(value, bool):
        return DeviceResult(device_id, value, cost=cost)
    name = runtime.type_name(value)
    why = _CONVERSIONS.get(name) or f"type conversion error from '{name.rpartition('.')[2]}' to 'bool'"
    return DeviceResult(device_id, False, f"CEL result of type {name} could not be converted to bool: {why}", cost)


@dataclass(frozen=True)
class RequestResult:
    """A request (`name`, or `name/option` for a `firstAvailable` option) and its devices; `error` when the scheduler
    cannot consider it at all (no such DeviceClass, a selector without CEL)."""

    request: str
    device_class: str
    devices: tuple[DeviceResult, ...] = ()
    error: str = ""

    @property
    def selected(self) -> tuple[str, ...]:
        return tuple(d.device for d in self.devices if d.matches)


@dataclass(frozen=True)
class Selection:
    """Which devices each request of a claim can have. Any error makes the scheduler give up allocating the claim,
    not just skip the device (`failure`: the first, in request then device order); `errors` are inputs the API
    server would have refused, each naming its field."""

    claim: str
    requests: tuple[RequestResult, ...]
    errors: tuple[str, ...] = ()

    @property
    def failure(self) -> str:
        found = [r.error for r in self.requests if r.error] + [d.error for r in self.requests for d in r.devices]
        return next(filter(None, found), "")


_Device = tuple[str, "dict[str, Any] | str"]  # its id and `device_value`
_Request = tuple[str, str, str, list[Any]]  # label, the name the allocator prints, DeviceClass, selectors
_Groups = tuple[tuple[str, list[Any]], ...]  # the class's selectors, then the request's


def select_devices(
    claim: Obj,
    slices: Sequence[Obj],
    classes: Sequence[Obj] = (),
    k8s_version: str | None = None,
    *,
    feature_gates: Gates = None,
) -> Selection:
    """Run a ResourceClaim's (or template's) selectors, after those of the DeviceClass each request names, on each
    device of the ResourceSlices, as the scheduler's allocator does (the stored-expression environment, the runtime
    cost limit, upstream's error texts). Node selection, taints, counters and capacity are not considered."""
    setup, meta = _setup(k8s_version, True, feature_gates), _get(claim, "metadata")
    who = "/".join(filter(None, (_text(_get(meta, "namespace")), _text(_get(meta, "name")))))  # klog.KObj
    errors: list[str] = []
    devices: list[_Device] = []
    with fe.answering_as(setup.version):
        for i, piece in enumerate(slices):
            spec = _get(piece, "spec")
            driver, pool = _text(_get(spec, "driver")), _text(_get(_get(spec, "pool"), "name"))
            listed = _get(spec, "devices")
            for j, device in enumerate(listed if isinstance(listed, list) else ()):
                try:
                    value = _device(device, driver, setup, fe.Path.new(f"slices[{i}]", "spec", "devices").index(j))
                    devices.append((f"{driver}/{pool}/{_text(_get(device, 'name'))}", value))
                except _Malformed as err:
                    errors.append(str(err))
    named = {_text(_get(_get(c, "metadata"), "name")): c for c in classes}
    results = tuple(_request(setup, who, request, named, devices) for request in _requests(claim))
    return Selection(who, results, tuple(errors))


def _requests(claim: Obj) -> Iterator[_Request]:
    """Each request, or each option of a `firstAvailable` request, in any apiVersion's shape."""
    spec = _get(claim, "spec")
    if _get(claim, "kind") == "ResourceClaimTemplate":
        spec = _get(spec, "spec")
    listed = _get(_get(spec, "devices"), "requests")
    for request in listed if isinstance(listed, list) else ():
        name, options = _text(_get(request, "name")), _get(request, "firstAvailable")
        if isinstance(options, list) and options and _get(request, "exactly") is None:
            for option in options:
                sub = _text(_get(option, "name"))
                yield f"{name}/{sub}", sub, _text(_get(option, "deviceClassName")), _selectors(option)
        else:
            exact = _get(request, "exactly") if isinstance(_get(request, "exactly"), Mapping) else request
            yield name, name, _text(_get(exact, "deviceClassName")), _selectors(exact)


def _selectors(owner: Any) -> list[Any]:
    selectors = _get(owner, "selectors")
    return selectors if isinstance(selectors, list) else []


def _request(setup: _Setup, who: str, request: _Request, classes: Obj, devices: list[_Device]) -> RequestResult:
    """validateDeviceRequest, then isSelectable on each device."""
    label, name, class_name, selectors = request
    head = f"claim {who}, request {name}"
    empty = [i for i, s in enumerate(selectors) if not isinstance(_get(s, "cel"), Mapping)]
    if empty:
        error = f"{head}, selector #{empty[0]}: CEL expression empty (unsupported selector type?)"
    elif not class_name:
        error = f"{head}: missing device class name (unsupported request type?)"
    elif class_name not in classes:
        missing = f'deviceclass.resource.k8s.io "{class_name}" not found'
        error = f"{head}: could not retrieve device class {class_name}: {missing}"
    else:
        groups = ((f"class {class_name}", _selectors(_get(classes[class_name], "spec"))), (f"claim {who}", selectors))
        return RequestResult(label, class_name, tuple(_selectable(setup, *device, groups) for device in devices))
    return RequestResult(label, class_name, error=error)


def _selectable(setup: _Setup, device_id: str, device: dict[str, Any] | str, groups: _Groups) -> DeviceResult:
    """selectorsMatch on the class's selectors, then the request's, each in order: the first that does not match
    decides, and the first that fails is the allocation's error (worded by release: 1.37 names the device and hints
    at optional access after `no such key`)."""
    cost = 0
    for owner, selectors in groups:
        for index, selector in enumerate(selectors):
            which = f"{owner}: selector #{index}"
            compiled = _compile(setup, _text(_get(_get(selector, "cel"), "expression")), False)
            if compiled.program is None:
                return DeviceResult(device_id, False, f"{which}: CEL compile error: {compiled.error}")
            result = device_matches(compiled, device, device_id)
            cost += result.cost
            if result.error:
                on = f" on device {device_id}" if setup.version >= (1, 37) else ""
                hint = _HINT if on and "no such key:" in result.error else ""
                return replace(result, error=f"{which}{on}: CEL runtime error: {result.error}{hint}", cost=cost)
            if not result.matches:
                return replace(result, cost=cost)
    return DeviceResult(device_id, True, cost=cost)


_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check with has() for optional"
    " fields"
)
ENVIRONMENTS: dict[str, Callable[[str], Env]] = {"dra-selector": selector_env}
