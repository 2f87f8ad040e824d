"""Compiling a policy's CEL: the variables Kubernetes declares, composed `variables`, and the return-type checks.

Mirrors k8s.io/apiserver pkg/admission/plugin/cel (compile.go, composition.go): `object`, `oldObject` and
`params` are `dyn`; `request` and `namespaceObject` are object types read without a schema; `authorizer` and
`authorizer.requestResource` exist for validations, match conditions, variables and audit annotations but
not for message expressions; `variables` is an object type that gains one field per variable, in order, typed
by the variable's result. A compile error does not stop loading: like the API server, the policy then fails
(or is ignored) at admission time with the error text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from kcel.checker.decls import FieldAccess
from kcel.checker.types import (
    BOOL,
    BYTES,
    DOUBLE,
    DURATION,
    DYN,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    UINT,
    CelType,
    list_of,
    map_of,
)
from kcel.env import Env
from kcel.errors import CompileError, EvalError, PlanError
from kcel.eval.equality import cel_equals
from kcel.eval.program import Program
from kcel.k8s import field as fe
from kcel.k8s.admission.model import NamedExpression, Policy
from kcel.libs import k8s_jsonpatch, k8s_mutation
from kcel.libs.k8s_authz import AUTHORIZER_TYPE, RESOURCE_CHECK_TYPE
from kcel.values import Optional

# -- object types read without a schema (common.SchemalessTypedToVal) ----------------------------------------------


@dataclass(frozen=True, eq=False)
class ObjectType:
    """A declared object type whose values are plain JSON dicts (the checker asks it for fields, codegen for readers).

    A field that is absent from the data is `no such key`, as for the unstructured form of a Go struct whose
    `omitempty` field is empty; a null field reads as null.
    """

    name: str
    fields: Mapping[str, CelType]

    @cached_property
    def cel(self) -> CelType:
        return CelType(self.name, kind="message", decl=self)

    def field_type(self, name: str, keywords: bool = False) -> CelType | None:
        return self.fields.get(name)

    def field_access(self, name: str, keywords: bool = False) -> FieldAccess | None:
        return _plain_access(name) if name in self.fields else None

    @property
    def equals(self) -> Callable[[Any, Any], bool]:
        return cel_equals


def _plain_access(key: str) -> FieldAccess:
    def read(obj: Any) -> Any:
        if not isinstance(obj, Mapping):
            raise EvalError("no such overload")
        if key not in obj:
            raise EvalError(f"no such key: {key}")
        return obj[key]

    def test(obj: Any) -> bool:
        if not isinstance(obj, Mapping):
            raise EvalError("no such overload")
        return key in obj

    return FieldAccess.of(read, test)


def _object(type_name: str, /, **fields: CelType) -> CelType:
    return ObjectType(type_name, fields).cel


_STRINGS = list_of(STRING)
_GVK = _object("kubernetes.GroupVersionKind", group=STRING, version=STRING, kind=STRING)
_GVR = _object("kubernetes.GroupVersionResource", group=STRING, version=STRING, resource=STRING)
_USER_INFO = _object(
    "kubernetes.UserInfo", username=STRING, uid=STRING, groups=_STRINGS, extra=map_of(STRING, _STRINGS)
)
REQUEST_TYPE = _object(
    "kubernetes.AdmissionRequest",
    kind=_GVK, resource=_GVR, subResource=STRING, requestKind=_GVK, requestResource=_GVR,
    requestSubResource=STRING, name=STRING, namespace=STRING, operation=STRING, userInfo=_USER_INFO,
    dryRun=BOOL, options=DYN,
)  # fmt: skip
_CONDITION = _object(
    "kubernetes.NamespaceCondition",
    status=STRING, type=STRING, lastTransitionTime=TIMESTAMP, message=STRING, reason=STRING,
)  # fmt: skip
NAMESPACE_TYPE = _object(
    "kubernetes.Namespace",
    metadata=_object(
        "kubernetes.NamespaceMetadata",
        name=STRING, generateName=STRING, namespace=STRING, labels=map_of(STRING, STRING),
        annotations=map_of(STRING, STRING), UID=STRING, creationTimestamp=TIMESTAMP,
        deletionGracePeriodSeconds=INT, deletionTimestamp=TIMESTAMP, generation=INT, resourceVersion=STRING,
        finalizers=_STRINGS,
    ),
    spec=_object("kubernetes.NamespaceSpec", finalizers=_STRINGS),
    status=_object("kubernetes.NamespaceStatus", conditions=list_of(_CONDITION), phase=STRING),
)  # fmt: skip
VARIABLES_TYPE_NAME = "kubernetes.variables"


# -- composed variables --------------------------------------------------------------------------------------------


class VariablesType:
    """The `variables` object type: one field per variable, read lazily from a `kcel.k8s.admission` activation."""

    def __init__(self, fields: Mapping[str, CelType]) -> None:
        self.fields = dict(fields)
        self.cel = CelType(VARIABLES_TYPE_NAME, kind="message", decl=self)

    def field_type(self, name: str, keywords: bool = False) -> CelType | None:
        return self.fields.get(name)

    def field_access(self, name: str, keywords: bool = False) -> FieldAccess | None:
        if name not in self.fields:
            return None

        def read(variables: Any) -> Any:
            return variables.resolve(name)

        def test(variables: Any) -> bool:
            variables.resolve(name)  # lazy.MapValue.Contains: an error is the answer
            return True

        def read_optional(variables: Any) -> Optional:
            return Optional(read(variables))

        return FieldAccess(read, test, read_optional)

    @property
    def equals(self) -> Callable[[Any, Any], bool]:
        return lambda a, b: a is b


_KEPT = {t.name: t for t in (BOOL, BYTES, DOUBLE, DURATION, INT, NULL, STRING, TIMESTAMP, UINT)}


def declared_type(output: CelType) -> CelType:
    """composition.go convertCelTypeToDeclType: scalars, lists and maps keep their type; anything else is dyn."""
    if output.kind == "list":
        return list_of(declared_type(output.params[0]))
    if output.kind == "map":
        return map_of(declared_type(output.params[0]), declared_type(output.params[1]))
    if output.kind in ("primitive", "null") or output in (TIMESTAMP, DURATION):
        return _KEPT.get(output.name, DYN)
    return DYN


# -- compiling -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Compiled:
    """One expression: its program, or the API server's error text (`compilation failed: ERROR: ...`)."""

    text: str
    program: Program | None
    error: str = ""


BOOL_RESULT: tuple[CelType, ...] = (BOOL,)
STRING_RESULT: tuple[CelType, ...] = (STRING,)
ANNOTATION_RESULT: tuple[CelType, ...] = (STRING, NULL)
ANY_RESULT: tuple[CelType, ...] = ()


def compile_expression(env: Env, text: str, results: Sequence[CelType]) -> Compiled:
    """compile.go CompileCELExpression: compile, then require one of `results` exactly (empty: anything)."""
    try:
        program = env.compile(text)
    except CompileError as err:
        return Compiled(text, None, f"compilation failed: {err.render()}")
    except PlanError as err:
        return Compiled(text, None, f"program instantiation failed: {err}")
    output = program.output_type
    if results and not any(str(output) == str(t) for t in results):
        wanted = str(results[0]) if len(results) == 1 else f"one of [{' '.join(map(str, results))}]"
        # "but got" arrived in 1.32 (apiserver 0e6467b27)
        got = f" but got {output}" if fe.api_server() >= (1, 32) else ""
        return Compiled(text, None, f"must evaluate to {wanted}{got}")
    return Compiled(text, program)


@dataclass(frozen=True)
class CompiledPolicy:
    """Every expression of a policy, compiled once (validations[i] pairs with messages[i])."""

    policy: Policy
    variables: tuple[tuple[str, Compiled], ...]
    match_conditions: tuple[tuple[str, Compiled], ...]
    validations: tuple[Compiled, ...]
    messages: tuple[Compiled | None, ...]
    audit_annotations: tuple[tuple[str, Compiled], ...]


@dataclass(frozen=True)
class Environments:
    """The base Kubernetes environment; the admission variables are added per policy."""

    base: Env

    def declare(
        self, has_params: bool, has_authorizer: bool, variables: VariablesType, patch_types: bool = False
    ) -> Env:
        """compile.go createEnvForOpts; `patch_types`: the MutatingAdmissionPolicy types and `jsonpatch` library."""
        declared: dict[str, str | CelType] = {
            "object": DYN, "oldObject": DYN, "namespaceObject": NAMESPACE_TYPE, "request": REQUEST_TYPE,
            "variables": variables.cel,
        }  # fmt: skip
        if has_params:
            declared["params"] = DYN
        if has_authorizer:
            declared["authorizer"] = AUTHORIZER_TYPE
            declared["authorizer.requestResource"] = RESOURCE_CHECK_TYPE
        return self.base.extend(declared, (k8s_mutation.LIBRARY, k8s_jsonpatch.LIBRARY) if patch_types else ())


def compile_variables(
    variables: Sequence[NamedExpression], envs: Environments, has_params: bool
) -> tuple[dict[str, Compiled], VariablesType]:
    """composition.go CompileAndStoreVariables: each variable sees those before it, typed by its result."""
    fields: dict[str, CelType] = {}
    compiled_variables: dict[str, Compiled] = {}
    for variable in variables:
        env = envs.declare(has_params, True, VariablesType(fields))
        compiled = compile_expression(env, variable.expression, ANY_RESULT)
        fields[variable.name] = declared_type(compiled.program.output_type) if compiled.program else DYN
        compiled_variables[variable.name] = compiled
    return compiled_variables, VariablesType(fields)


def compile_policy(policy: Policy, envs: Environments) -> CompiledPolicy:
    """plugin.go compilePolicy: variables first (each sees those before it), then everything else."""
    has_params = policy.param_kind is not None
    variables, composed = compile_variables(policy.variables, envs, has_params)
    env = envs.declare(has_params, True, composed)
    message_env = envs.declare(has_params, False, composed)
    return CompiledPolicy(
        policy=policy,
        variables=tuple(variables.items()),
        match_conditions=compile_named(env, policy.match_conditions, BOOL_RESULT),
        validations=tuple(compile_expression(env, v.expression, BOOL_RESULT) for v in policy.validations),
        messages=tuple(
            compile_expression(message_env, v.message_expression, STRING_RESULT) if v.message_expression else None
            for v in policy.validations
        ),
        audit_annotations=tuple(
            (a.key, compile_expression(env, a.value_expression, ANNOTATION_RESULT)) for a in policy.audit_annotations
        ),
    )


def compile_named(env: Env, expressions: Sequence[NamedExpression], results: Sequence[CelType]) -> tuple[Any, ...]:
    return tuple((e.name, compile_expression(env, e.expression, results)) for e in expressions)
