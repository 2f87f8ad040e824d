"""`Env`: declarations plus libraries; `compile()` chains parse -> (check) -> plan."""

from __future__ import annotations

import copy
import difflib
import importlib
import operator
import threading
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any

from kcel.checker.checker import check as check_types
from kcel.checker.decls import DeferredLibrary, Library, Overload, StructType, loaded
from kcel.checker.types import DURATION, DYN, TIMESTAMP, CelType, list_of, map_of, opaque, optional_of, parse_type
from kcel.eval.dispatch import KUBERNETES_PRICED
from kcel.eval.program import Program
from kcel.libs.operators import DECLARATION_ORDER
from kcel.parser import parse
from kcel.parser.macros import BINDINGS, BLOCK, LISTS, STANDARD, TWO_VAR, Macro
from kcel.values import TypeValue

if TYPE_CHECKING:
    from kcel.cost import CostEstimate, SizeEstimator

# cel-go's standard library and extensions, in the order their tables are consulted; all are optional at
# import time so that a missing extension never breaks the core. Kubernetes' are in kcel.k8s.environment.
CEL_LIBRARY_MODULES = {
    "operators": "kcel.libs.operators",
    "standard": "kcel.libs.standard",
    "timestamps": "kcel.libs.timestamps",
    "optional": "kcel.libs.optional",
    "strings": "kcel.libs.strings",
    "math": "kcel.libs.math",
    "lists": "kcel.libs.lists",
    "sets": "kcel.libs.sets",
    "encoders": "kcel.libs.encoders",
    "network": "kcel.libs.network",
}

TYPE_NAMES = {
    name: TypeValue(name)
    for name in (
        "bool", "int", "uint", "double", "string", "bytes", "list", "map", "null_type", "type",
        "google.protobuf.Timestamp", "google.protobuf.Duration", "optional_type",
    )
}  # fmt: skip


# Each operator's overload ids by their position in cel-go's declarations.
_DECLARATION_RANKS = {
    function: {oid: i for i, oid in enumerate(order)} for function, order in DECLARATION_ORDER.items()
}

_OPAQUE_NAMES = frozenset({"optional_type", "google.protobuf.Timestamp", "google.protobuf.Duration"})
_NAMED_TYPES = {
    "list": list_of(DYN), "map": map_of(DYN, DYN), "google.protobuf.Timestamp": TIMESTAMP,
    "google.protobuf.Duration": DURATION, "optional_type": optional_of(DYN),
}  # fmt: skip


def load_library(name: str) -> Library:
    module = importlib.import_module(CEL_LIBRARY_MODULES[name])
    return module.LIBRARY  # type: ignore[no-any-return]


def cel_libraries() -> list[Library]:
    """cel-go's standard library and extensions, without Kubernetes' libraries."""
    libraries = []
    for name in CEL_LIBRARY_MODULES:
        try:
            libraries.append(load_library(name))
        except ImportError:
            continue
    return libraries


@cache
def all_libraries() -> tuple[Library, ...]:
    """Every library kcel ships, Kubernetes' at the newest API server's versions: what `Env()` has by default.

    Where two libraries declare one overload (Kubernetes' IP and CIDR library and cel-go's network
    extension), the first declaration, Kubernetes', is kept.
    """
    from kcel.k8s.environment import LATEST, configuration, library

    kubernetes = [loaded(lib) for lib in configuration(LATEST, "stored", LATEST).libraries]
    candidates = [*kubernetes, *cel_libraries(), library("k8s_jsonpatch", None)]
    names: set[str] = set()
    seen: set[str] = set()
    chosen = []
    for candidate in candidates:
        if candidate is None or candidate.name in names:  # a library Kubernetes already has, at its version
            continue
        names.add(candidate.name)
        kept = tuple(o for o in candidate.overloads if o.id not in seen)
        seen.update(o.id for o in kept)
        if kept:  # a library all of whose overloads another declares (cel-go's network extension) is left out
            chosen.append(candidate if len(kept) == len(candidate.overloads) else replace(candidate, overloads=kept))
    return tuple(chosen)


@cache
def plain_cel_go_libraries() -> tuple[Library, ...]:
    """`all_libraries()` as plain cel-go costs them: without Kubernetes' estimator, the functions it prices by name
    (its CallCost and EstimateCallCost) cost cel-go's default, 1."""
    return tuple(
        replace(library, overloads=tuple(_unpriced(o) for o in library.overloads))
        if any(o.function in KUBERNETES_PRICED for o in library.overloads)
        else library
        for library in all_libraries()
    )


def _unpriced(overload: Overload) -> Overload:
    return replace(overload, cost=None, estimate=None) if overload.function in KUBERNETES_PRICED else overload


def _declared_types(variables: Mapping[str, str | CelType]) -> dict[str, CelType]:
    """Declarations as CEL type strings (`"map(string, int)"`) or CelTypes, as CelTypes."""
    return {name: parse_type(t) if isinstance(t, str) else t for name, t in variables.items()}


class Env:
    """Variables (name -> CEL type), libraries and a container, ready to compile expressions.

    >>> Env(variables={"self": "list(string)"}).compile("self.all(x, x.startsWith('a'))").evaluate({"self": ["ab"]})
    True
    """

    def __init__(
        self,
        variables: Mapping[str, str | CelType] | None = None,
        *,
        container: str = "",
        libraries: Sequence[Library | DeferredLibrary] | None = None,
        macros: Iterable[Macro] | None = None,
        homogeneous_literals: bool = False,
        k8s_version: str | None = None,
        compatibility_version: str | None = None,
        environment: str = "new",
        optimize: bool = True,
        error_on_bad_presence_test: bool = False,
        messages: Iterable[Any] | None = None,
    ) -> None:
        """`k8s_version="1.34"`: the base environment of a Kubernetes 1.34 API server, for expressions written now
        (`environment="new"`: at its compatibility version, 1.33) or already stored (`"stored"`: every option 1.34
        knows); ValueError names the supported versions. `compatibility_version="1.33"`: the base environment at
        that compatibility version, as upstream's `MustBaseEnvSet` builds it in the newest release. Neither: every
        library kcel ships, costed as plain cel-go costs them (`plain_cel_go_libraries()`).

        `messages`: protobuf message types (generated classes, `_pb2` modules or a `FileDescriptorSet`), which
        variables may then be declared as and literals may build (needs `pip install 'kcel[protobuf]'`)."""
        keyword_field_names = literal_validators = lenient_optional_or = shared_macro_targets = False
        optionals_through_go = lenient_code_points = False
        optional_type_name = "optional_type"
        tracks_sizes = literal_exemption_through_calls = True
        kubernetes = k8s_version is not None or compatibility_version is not None
        if kubernetes:
            from kcel.k8s.environment import (
                KEYWORD_FIELD_NAMES,
                LATEST,
                compatibility,
                configuration,
                parse_version,
                server_version,
            )

            if compatibility_version is not None:
                server, version = LATEST, parse_version(compatibility_version)
            else:
                server = server_version(k8s_version)
                version = compatibility(server)
            config = configuration(version, environment, server)
            # upstream SetRecognizeKeywordAsFieldName; stored expressions get every option
            keyword_field_names = version >= KEYWORD_FIELD_NAMES or environment == "stored"
            literal_validators = config.literal_validators
            lenient_optional_or = config.lenient_optional_or
            optionals_through_go = config.optionals_through_go
            lenient_code_points = server < (1, 33)  # cel-go v0.23 rejects an invalid code point's escape
            shared_macro_targets = config.shared_macro_targets
            optional_type_name = config.optional_type_name
            literal_exemption_through_calls = config.literal_exemption_through_calls
            tracks_sizes = server >= (1, 33)  # cel-go v0.23's estimator (kcel.cost.estimate)
            libraries = config.libraries if libraries is None else libraries
            macros = config.macros if macros is None else macros
            homogeneous_literals = config.homogeneous_literals
        declared = variables or {}
        self.container = container
        self.keyword_field_names = keyword_field_names
        self.literal_validators = literal_validators
        self.homogeneous_literals = homogeneous_literals
        self.literal_exemption_through_calls = literal_exemption_through_calls  # cel-go v0.18's validator
        self.optimize = optimize  # fold constant literals at plan time (cel-go OptOptimize; costs them 0)
        # cel-go's EnableErrorOnBadPresenceTest: `has(x.f)` and `x.?f` on an int, a string... are errors (cel-spec)
        self.error_on_bad_presence_test = error_on_bad_presence_test
        # cel-go charges `has()` one unit; Kubernetes' base environment sets PresenceTestHasCost(false)
        self.presence_test_cost = 0 if kubernetes else 1
        self.lenient_optional_or = lenient_optional_or
        self.optionals_through_go = optionals_through_go  # cel-go before v0.29 (Kubernetes up to 1.36)
        self.lenient_code_points = lenient_code_points  # a surrogate's escape is U+FFFD (kcel.parser.literals)
        # cel-go before v0.22 expanded optMap/optFlatMap with its target twice under the same ids: checked twice, a
        # type variable in it conflicts with itself ("incompatible type already exists"), which rejects the rule
        self.shared_macro_targets = shared_macro_targets
        self.optional_type_name = optional_type_name  # as checker messages name it; `optional` in cel-go v0.17
        self.tracks_sizes = tracks_sizes
        chosen = list(libraries if libraries is not None else plain_cel_go_libraries())
        if messages is not None:
            from kcel.proto.library import protobuf_library

            chosen.append(protobuf_library(messages))
        self._index(chosen)
        self.variables: dict[str, CelType] = self._declared_types(declared)
        library_macros = tuple(m for library in self._ready for m in library.macros)  # deferred ones have none
        self.macros = (
            tuple(macros) if macros is not None else STANDARD + TWO_VAR + BINDINGS + LISTS + BLOCK + library_macros
        )

    def _index(self, libraries: Sequence[Library | DeferredLibrary]) -> None:
        """What the checker and planner look up in the libraries: overloads by function, types by name; a deferred
        library's names wait in `_waiting` until one is looked up."""
        self._libraries = list(libraries)
        self._lock = threading.Lock()
        self._waiting: dict[str, list[DeferredLibrary]] = {}  # a function or type name -> libraries declaring it
        for library in self._libraries:
            if isinstance(library, DeferredLibrary) and not library.loaded:
                for name in (*library.functions, *library.type_names):
                    self._waiting.setdefault(name, []).append(library)
        self._ready = [library for library in self._libraries if not self._waits(library)]
        self._overloads: dict[str, list[Overload]] = {}
        self._add_overloads()
        self._library_types = {t.name: t for library in self._ready for t in library.types}
        self.constants: dict[str, Any] = {n: v for library in self._ready for n, v in library.constants.items()}
        self._struct_resolvers = tuple(lib.struct_types for lib in self._ready if lib.struct_types is not None)
        self.ast_validators = tuple(v for library in self._ready for v in library.validators)
        self.mixed_literal_functions = frozenset(f for library in self._ready for f in library.mixed_literal_functions)
        self._forget_derived()

    def _waits(self, library: Library | DeferredLibrary) -> bool:
        return isinstance(library, DeferredLibrary) and any(library in found for found in self._waiting.values())

    def _add_overloads(self, functions: Container[str] | None = None) -> None:
        """The functions' (all functions') overloads from every library loaded, in the libraries' order, then in
        cel-go's."""
        found: dict[str, list[Overload]] = {}
        for library in self._ready:
            for overload in library.overloads:
                if functions is None or overload.function in functions:
                    found.setdefault(overload.function, []).append(overload)
        for function, rank in _DECLARATION_RANKS.items():  # the checker tries overloads in cel-go's order
            if function in found:
                found[function].sort(key=lambda o: rank.get(o.id, len(rank)))  # noqa: B023 (used at once)
        self._overloads.update(found)

    def _load(self, name: str) -> None:
        """Load the deferred libraries that declare `name`, and index what they declare."""
        with self._lock:
            waiting = self._waiting.pop(name, None)
            if not waiting:
                return
            for found in self._waiting.values():
                found[:] = [library for library in found if library not in waiting]
            self._ready = [library for library in self._libraries if not self._waits(library)]
            arrived = [library.library for library in waiting]
            self._add_overloads({o.function for library in arrived for o in library.overloads})
            self._library_types.update({t.name: t for library in arrived for t in library.types})
            self._forget_derived()

    def _forget_derived(self) -> None:
        """Drop what was computed from the libraries loaded so far."""
        for cached in ("overloads_by_id", "_loaded_overloads_by_id", "_signature_type_names"):
            self.__dict__.pop(cached, None)

    @property
    def libraries(self) -> list[Library]:
        """Every library of the environment, loaded."""
        for name in list(self._waiting):
            self._load(name)
        return [loaded(library) for library in self._libraries]

    def extend(self, variables: Mapping[str, str | CelType], libraries: Sequence[Library] = ()) -> Env:
        """This environment with more variables declared (and libraries added); options are shared."""
        clone = copy.copy(self)
        if libraries:
            known = {library.name for library in self._libraries}
            clone._index([*self._libraries, *(library for library in libraries if library.name not in known)])
        clone.variables = {**self.variables, **clone._declared_types(variables)}
        return clone

    def _declared_types(self, variables: Mapping[str, str | CelType]) -> dict[str, CelType]:
        """Declarations as CelTypes, message names (`"pkg.Msg"`, `"list(pkg.Msg)"`) as the libraries declare them;
        a type name no one declares is an error naming it (`strng`, `lst(int)`), as cel-go's type parser answers."""
        declared = {name: self._known(t) for name, t in _declared_types(variables).items()}
        for name, text in variables.items():
            if isinstance(text, str):
                self._check_declared(declared[name], f"variable {name!r}: {text!r}")
        return declared

    @cached_property
    def _signature_type_names(self) -> frozenset[str]:
        """The names of the types the libraries declare or use in their functions' signatures."""
        pending = [t for overload in self.overloads_by_id.values() for t in (*overload.args, overload.result)]
        found: set[str] = {*_OPAQUE_NAMES, *self._library_types}  # every library loaded by now
        while pending:
            t = pending.pop()
            if t.kind in ("opaque", "message"):
                found.add(t.name)
            pending.extend(t.params)
        return frozenset(found)

    def _check_declared(self, t: CelType, where: str) -> None:
        named = t.kind in ("opaque", "message") and t.decl is None
        unknown = t.kind == "param" or (
            named and t.name not in self._signature_type_names and self.struct_type(t.name) is None
        )
        if unknown:
            known = [*_NAMED_TYPES, *TYPE_NAMES, *self._signature_type_names]
            close = difflib.get_close_matches(t.name, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(f"{where}: unknown type {t.name!r}{hint}")
        for inner in t.params:
            self._check_declared(inner, where)

    def _known(self, t: CelType) -> CelType:
        if t.kind == "message" and t.decl is None:
            return self._library_type(t.name) or t
        if not t.params:
            return t
        params = tuple(self._known(p) for p in t.params)
        return t if all(map(operator.is_, params, t.params)) else replace(t, params=params)

    # Declarations, as the planner asks for them.
    def is_variable(self, name: str) -> bool:
        return name in self.variables

    def _undeclared_type_name(self, name: str) -> bool:
        """`optional_type` where cel-go named the type `optional` (and declared no name for it)."""
        return name == "optional_type" and self.optional_type_name != name

    def type_value(self, name: str) -> TypeValue | None:
        if self._undeclared_type_name(name):
            return None
        if name in TYPE_NAMES:
            return TYPE_NAMES[name]
        return TypeValue(name) if self._library_type(name) is not None else None

    def _library_type(self, name: str) -> CelType | None:
        if name in self._waiting:
            self._load(name)
        return self._library_types.get(name)

    def overloads(self, function: str) -> Sequence[Overload]:
        if function in self._waiting:
            self._load(function)
        return self._overloads.get(function, ())

    def struct_type(self, name: str) -> StructType | None:
        """The message type a qualified name declares (`JSONPatch`), if a library declares it."""
        for resolve in self._struct_resolvers:
            found = resolve(name)
            if found is not None:
                return found
        return None

    def type_of_name(self, name: str) -> CelType | None:
        """The type a type name denotes (`int`, `google.protobuf.Timestamp`, `net.IP`)."""
        found = self._library_type(name)
        if found is not None:
            return found
        if name not in TYPE_NAMES or self._undeclared_type_name(name):
            return None
        if name in _NAMED_TYPES:
            return _NAMED_TYPES[name]
        return parse_type(name) if "." not in name else opaque(name)

    @cached_property
    def overloads_by_id(self) -> Mapping[str, Overload]:
        """Every overload by its id, as the cost estimator looks them up."""
        return {o.id: o for library in self.libraries for o in library.overloads}

    def estimate_cost(self, program: Program, sizes: SizeEstimator | None = None) -> CostEstimate:
        """The static (min, max) cost of a type-checked program (cel-go `env.EstimateCost`).

        `sizes` bounds what the expression cannot (a variable's string length, a schema's maxItems).
        """
        if program.checked is None:
            raise ValueError("cost estimation needs a type-checked program")
        from kcel.cost import estimate  # the estimator only when a cost is asked for

        by_id = self._loaded_overloads_by_id  # what the checker chose came from a loaded library, unless another
        if any(i not in by_id for ids in program.checked.overloads.values() for i in ids):  # Env checked it
            by_id = self.overloads_by_id
        return estimate(program.checked, by_id, sizes, self.presence_test_cost, self.tracks_sizes)

    @cached_property
    def _loaded_overloads_by_id(self) -> Mapping[str, Overload]:
        """The overloads of the libraries loaded so far by id: estimating a cost loads no deferred library."""
        return {o.id: o for library in self._ready for o in loaded(library).overloads}

    def compile(self, text: str, check: bool = True) -> Program:
        """Parse, type-check (unless `check=False`) and plan; raises `CompileError` rendered like cel-go."""
        parsed = parse(text, macros=self.macros, lenient_code_points=self.lenient_code_points)
        if not check:
            return Program(parsed, self, optimize=self.optimize)
        return Program(parsed, self, check_types(parsed, self), self.optimize)
