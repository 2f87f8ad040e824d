"""MutatingAdmissionPolicy: compiling a policy and mutating one request's object, as the API server does.

Follows k8s.io/apiserver pkg/admission/plugin/policy/mutating: `compilation.go` (variables and match conditions
in the policy environment; mutations with the patch types added, returning `Object` or `list(JSONPatch)`),
`dispatcher.go` (for each policy, binding and param that match: the match conditions, then every mutation in
order, each with its own 10,000,000 cost budget, on the object the previous one left), `reinvocationcontext.go`
(a policy with `reinvocationPolicy: IfNeeded` runs once more when a later mutation changed the object) and
`patch/` (a JSON Patch applied by RFC 6902; an apply configuration merged by the resource's schema).
Errors are the dispatcher's: under `failurePolicy: Fail` the first one denies the request.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kcel.checker.types import CelType, list_of
from kcel.k8s.admission.compilation import (
    BOOL_RESULT,
    Compiled,
    Environments,
    compile_expression,
    compile_named,
    compile_variables,
)
from kcel.k8s.admission.decision import Evaluation
from kcel.k8s.admission.dispatch import Admission, ConfigError, Resources, collect_params
from kcel.k8s.admission.evaluation import (
    RUNTIME_BUDGET,
    Inputs,
    Meter,
    OutOfBudget,
    activation,
    match_conditions,
    run_pass,
)
from kcel.k8s.admission.matching import Attributes, matches, mismatch
from kcel.k8s.admission.model import APPLY_CONFIGURATION, FAIL, IF_NEEDED, MutatingBinding, MutatingPolicy
from kcel.k8s.crds.crd import CRD
from kcel.k8s.customresources.defaulting import default
from kcel.k8s.patch.jsonpatch import JSONPatchError, TestFailed, apply_patch
from kcel.k8s.patch.merge import MergeError, apply_configuration
from kcel.k8s.patch.schemas import SchemaNotFound, SchemaSource
from kcel.k8s.patch.strict import strict_decoding_error, unknown_fields
from kcel.libs import k8s_mutation
from kcel.libs.k8s_authz import Authorizer
from kcel.libs.k8s_mutation import JSONPatchValue, MutationValueError, ObjectValue, check_type_names, to_json

OBJECT_TYPE: CelType = k8s_mutation.MutationType(k8s_mutation.OBJECT).cel
JSON_PATCHES: CelType = list_of(k8s_mutation.MutationType(k8s_mutation.JSON_PATCH).cel)


@dataclass(frozen=True)
class CompiledMutatingPolicy:
    """A MutatingAdmissionPolicy's expressions, compiled once (mutations[i] pairs with policy.mutations[i])."""

    policy: MutatingPolicy
    variables: tuple[tuple[str, Compiled], ...]
    match_conditions: tuple[tuple[str, Compiled], ...]
    mutations: tuple[Compiled, ...]


def compile_mutating_policy(policy: MutatingPolicy, envs: Environments) -> CompiledMutatingPolicy:
    """compilation.go compilePolicy: variables and match conditions without the patch types, mutations with them."""
    has_params = policy.param_kind is not None
    variables, composed = compile_variables(policy.variables, envs, has_params)
    env = envs.declare(has_params, True, composed)
    patch_env = envs.declare(has_params, True, composed, patch_types=True)
    return CompiledMutatingPolicy(
        policy=policy,
        variables=tuple(variables.items()),
        match_conditions=compile_named(env, policy.match_conditions, BOOL_RESULT),
        mutations=tuple(
            compile_expression(
                patch_env, m.expression, (OBJECT_TYPE,) if m.patch_type == APPLY_CONFIGURATION else (JSON_PATCHES,)
            )
            for m in policy.mutations
        ),
    )


# -- applying one mutation -----------------------------------------------------------------------------------------


class MutationFailed(Exception):
    """The error the dispatcher records for a mutation (`addConfigError`, reason Invalid)."""


class Rejected(Exception):
    """A status error that rejects the request whatever the failure policy (`k8serrors.StatusError`, which the
    dispatcher returns as it is): an internal error (500) unless said otherwise."""

    code, reason = 500, "InternalError"


class Unavailable(Rejected):
    """No schema for the kind (503)."""

    code, reason = 503, "ServiceUnavailable"


def json_patch_operations(value: Any) -> list[dict[str, Any]]:
    """json_patch.go evaluatePatchExpression: the expression's JSONPatch values as RFC 6902 operations."""
    if not isinstance(value, (list, tuple)):
        raise MutationFailed("type mismatch: JSONPatchType.expression should evaluate to array")
    operations = []
    for patch in value:
        if not isinstance(patch, JSONPatchValue):
            raise MutationFailed(
                "type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: "
                f"type conversion error from '{getattr(patch, 'cel_type_name', type(patch).__name__)}' to "
                "'*mutation.JSONPatchVal'"
            )
        operation: dict[str, Any] = {"op": patch.op, "path": patch.path}
        if patch.from_:
            operation["from"] = patch.from_
        if patch.has_value():
            if isinstance(patch.value, ObjectValue) and (problems := check_type_names(patch.value)):
                raise MutationFailed("type mismatch: " + "\n".join(problems))
            try:
                operation["value"] = to_json(patch.value)
            except MutationValueError as err:
                raise MutationFailed(
                    f"JSONPath valueExpression evaluated to a type that could not marshal to JSON: {err}"
                ) from None
        operations.append(operation)
    return operations


def patch_json(obj: Mapping[str, Any], value: Any, schemas: SchemaSource) -> dict[str, Any]:
    """json_patch.go Patch: apply the operations; a failed `test` leaves the object as it was. The result is decoded
    strictly into a built-in kind's Go type: a field it lacks is an internal error (when its schema is known here)."""
    operations = json_patch_operations(value)
    try:
        patched = apply_patch(obj, operations)
    except TestFailed:
        return dict(obj)
    except JSONPatchError as err:
        raise MutationFailed(f"JSON Patch: {err}") from None
    if not isinstance(patched, dict):
        raise MutationFailed("JSON Patch: the patched document is not an object")
    root = schemas.builtin_root(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if root is not None:
        # The request's own unknown fields were dropped when the API server decoded it (field validation Warn or
        # Ignore; Strict refused it): only those the patch brings count.
        before = set(unknown_fields(root, obj))
        if unknown := [path for path in unknown_fields(root, patched) if path not in before]:
            raise Rejected(f"Internal error occurred: {strict_decoding_error(unknown)}")
    return patched


def apply_object(obj: Mapping[str, Any], value: Any, schemas: SchemaSource) -> dict[str, Any]:
    """smd.go Patch: check the apply configuration's type names, then merge it by the kind's schema."""
    if not isinstance(value, ObjectValue):
        kind = getattr(value, "cel_type_name", type(value).__name__)
        raise MutationFailed(f"unsupported return type from ApplyConfiguration expression: {kind}")
    if problems := check_type_names(value):
        raise MutationFailed("type mismatch: " + "\n".join(problems))
    try:
        patch = to_json(value, doubles=False)
    except MutationValueError as err:
        raise MutationFailed(f"invalid return type: {err}") from None
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    patch["apiVersion"], patch["kind"] = api_version, kind
    try:
        root = schemas.root_for(api_version, kind)
    except SchemaNotFound as err:
        raise Unavailable(str(err)) from None
    try:
        return apply_configuration(obj, patch, root)
    except MergeError as err:
        raise MutationFailed(f"error applying patch: {err}") from None


# -- one admission's mutating phase -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Invocation:
    """A policy, one of its bindings and one param (generic.PolicyInvocation), with what its expressions see."""

    compiled: CompiledMutatingPolicy
    binding: MutatingBinding
    param: Any
    inputs: Inputs

    @property
    def key(self) -> tuple[str, str, str, str]:
        """reinvocationcontext.go key: the policy, the binding, and the param's namespace and name."""
        metadata = self.param.get("metadata") if isinstance(self.param, Mapping) else None
        name = metadata.get("name", "") if isinstance(metadata, Mapping) else ""
        namespace = metadata.get("namespace", "") if isinstance(metadata, Mapping) else ""
        return self.compiled.policy.name, self.binding.name, str(namespace), str(name)


@dataclass
class Reinvocation:
    """reinvocationcontext.go: IfNeeded invocations run since the object last changed, and those to run again."""

    previously_invoked: set[tuple[str, str, str, str]] = field(default_factory=set)
    to_reinvoke: set[tuple[str, str, str, str]] = field(default_factory=set)
    requested: bool = False

    def object_changed(self) -> None:
        self.to_reinvoke |= self.previously_invoked
        self.previously_invoked = set()
        self.requested = True


@dataclass(frozen=True)
class PolicyError:
    """generic.PolicyError: `policy 'p' with binding 'b' denied request: <message>`."""

    policy: MutatingPolicy
    binding: str | None
    message: str
    reason: str = ""

    def text(self) -> str:
        if self.binding is None:
            return f'policy "{self.policy.name}" denied request: {self.message}'
        return f"policy '{self.policy.name}' with binding '{self.binding}' denied request: {self.message}"


@dataclass
class MutatingPhase:
    """The state of one request through the MutatingAdmissionPolicy plugin (first pass, then one reinvocation)."""

    schemas: SchemaSource
    meter: Meter
    attributes: Attributes
    crds: Sequence[CRD] = ()
    errors: list[PolicyError] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    reinvocation: Reinvocation = field(default_factory=Reinvocation)

    def run_pass(self, invocations: Sequence[Invocation], reinvoking: bool) -> None:
        """dispatcher.go dispatchInvocations for one pass over the invocations that match the current object."""
        dirty = False
        for invocation in invocations:
            policy = invocation.compiled.policy
            if invocation.compiled.match_conditions:
                matched, failed, error = match_conditions(
                    invocation.compiled, policy.failure_policy, self.with_object(invocation.inputs), self.meter
                )
                if error:
                    self.fail(invocation, error, "Invalid")
                    continue
                if not matched:
                    detail = f"match condition {failed!r} is false" if failed else ""
                    self.record(invocation, "not-matched", detail)
                    continue
            if reinvoking and invocation.key not in self.reinvocation.to_reinvoke:
                continue
            before = self.attributes.object
            dirty |= self.mutate(invocation)
            if self.attributes.object != before:
                self.reinvocation.object_changed()
            if policy.reinvocation_policy == IF_NEEDED:
                self.reinvocation.previously_invoked.add(invocation.key)
        if dirty:
            self.reinvocation.object_changed()

    def with_object(self, inputs: Inputs) -> Inputs:
        return replace(inputs, object=self.attributes.object)

    def mutate(self, invocation: Invocation) -> bool:
        """Every mutation of the policy in order; True when one was applied. Raises Rejected."""
        applied = False
        inputs = self.with_object(invocation.inputs)
        bound, variables = activation(
            inputs, invocation.compiled, self.meter, request=inputs.request, namespace=inputs.namespace,
            authorizer=True,
        )  # fmt: skip
        patch_types = [m.patch_type for m in invocation.compiled.policy.mutations]
        for compiled, patch_type in zip(invocation.compiled.mutations, patch_types, strict=True):
            if self.attributes.object is None:  # nothing to patch
                continue
            bound["object"] = self.attributes.object
            try:
                mutated = self.mutation(compiled, patch_type, bound, variables)
            except MutationFailed as err:
                self.fail(invocation, str(err), "Invalid")
                continue
            except Rejected:
                raise
            except Exception as err:  # kcel's own bug, not the request's: the policy's failure policy decides
                self.fail(invocation, f"internal error: {type(err).__name__}: {err}", "InternalError")
                continue
            applied = True
            changed = mutated != self.attributes.object
            self.attributes = replace(self.attributes, object=mutated)
            self.record(invocation, "mutated" if changed else "unchanged")
        return applied

    def mutation(self, compiled: Compiled, patch_type: str, bound: dict[str, Any], variables: Any) -> dict[str, Any]:
        if compiled.program is None:
            raise MutationFailed(compiled.error)
        try:
            (result,), _ = run_pass([compiled], bound, variables, self.meter, RUNTIME_BUDGET)
        except OutOfBudget:
            raise MutationFailed(
                "validation failed due to running out of cost budget, no further validation rules will be run"
            ) from None
        assert result is not None
        if result.error is not None:
            raise MutationFailed(result.error)
        obj = copy.deepcopy(self.attributes.object)
        if patch_type == APPLY_CONFIGURATION:
            patched = apply_object(obj, result.value, self.schemas)
        else:
            patched = patch_json(obj, result.value, self.schemas)
        self.default(patched)
        return patched

    def default(self, obj: dict[str, Any]) -> None:
        """dispatchOne's `o.GetObjectDefaulter().Default`: a custom resource gets its CRD's schema defaults.
        (Built-in kinds' Go defaulting functions are not reproduced.)"""
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        for crd in self.crds:
            if crd.group == group and crd.kind == obj.get("kind"):
                try:
                    default(obj, crd.schema_of(crd.version(version)))
                except KeyError:  # a version the CRD does not have
                    pass

    def fail(self, invocation: Invocation, message: str, reason: str) -> None:
        policy = invocation.compiled.policy
        self.record(invocation, "error", message)
        if policy.failure_policy == FAIL:
            self.errors.append(PolicyError(policy, invocation.binding.name, message, reason))

    def record(self, invocation: Invocation, outcome: str, detail: str = "") -> None:
        policy, binding, _, param = invocation.key
        self.evaluations.append(Evaluation(policy, binding, param, outcome, detail=detail))


# -- the plugin: which invocations run, and the passes -------------------------------------------------------------


@dataclass(frozen=True)
class MutatingResult:
    """The request with the mutated object, the errors that deny it (first one answers), and what ran."""

    request: Mapping[str, Any]
    errors: tuple[PolicyError, ...]
    evaluations: tuple[Evaluation, ...]
    rejected: Rejected | None = None  # a status error that rejects the request
    details: Mapping[str, str] = field(default_factory=dict)  # the denial Status's details: group, kind, name


def invocations(
    policies: Sequence[CompiledMutatingPolicy],
    bindings: Mapping[str, tuple[MutatingBinding, ...]],
    admission: Admission,
    phase: MutatingPhase,
) -> list[Invocation]:
    """generic/policy_dispatcher.go Dispatch: policies, then their bindings, then params, in order."""
    found = []
    explain = not phase.evaluations  # the first pass says why a policy or binding does not apply; not a reinvocation
    labels = admission.namespace_labels
    for compiled in policies:
        policy = compiled.policy
        match = matches(policy.match_constraints, admission.attributes, labels)
        if match is None:
            if explain:
                why = f"matchConstraints: {mismatch(policy.match_constraints, admission.attributes, labels)}"
                phase.evaluations.append(Evaluation(policy.name, "", "", "policy-not-matched", detail=why))
            continue
        if explain and not bindings.get(policy.name):
            phase.evaluations.append(Evaluation(policy.name, "", "", "unbound", detail="no binding names this policy"))
        for binding in bindings.get(policy.name, ()):
            limits = binding.match_resources
            if limits is not None and matches(limits, admission.attributes, labels) is None:
                if explain:
                    why = f"matchResources: {mismatch(limits, admission.attributes, labels)}"
                    phase.evaluations.append(
                        Evaluation(policy.name, binding.name, "", "binding-not-matched", detail=why)
                    )
                continue
            try:
                params = collect_params(policy, binding, admission.attributes.namespace, admission.resources)
            except ConfigError as err:
                phase.errors.append(PolicyError(policy, binding.name, f"failed to configure binding: {err}"))
                continue
            for param in params:
                found.append(Invocation(compiled, binding, param, admission.inputs(match.resource, match.kind, param)))
    return found


def mutate_request(
    policies: Sequence[CompiledMutatingPolicy],
    bindings: Mapping[str, tuple[MutatingBinding, ...]],
    resources: Resources,
    schemas: SchemaSource,
    request: Mapping[str, Any],
    authorizer: Authorizer | None,
    meter: Meter,
    crds: Sequence[CRD] = (),
) -> MutatingResult:
    """The MutatingAdmissionPolicy plugin on one request (CREATE, UPDATE and CONNECT only), reinvoked once."""
    admission = Admission((), {}, resources, request, authorizer, meter)
    if admission.attributes.operation == "DELETE" or not policies:
        return MutatingResult(request, (), ())
    phase = MutatingPhase(schemas, meter, admission.attributes, crds)
    try:
        phase.run_pass(invocations(policies, bindings, admission, phase), reinvoking=False)
        if phase.reinvocation.requested and not any(e.policy.failure_policy == FAIL for e in phase.errors):
            admission = Admission((), {}, resources, _with_object(request, phase.attributes.object), authorizer, meter)
            phase.run_pass(invocations(policies, bindings, admission, phase), reinvoking=True)
    except Rejected as err:
        return MutatingResult(request, (), tuple(phase.evaluations), err, admission.details())
    errors = tuple(e for e in phase.errors if e.policy.failure_policy == FAIL)
    mutated = _with_object(request, phase.attributes.object)
    return MutatingResult(mutated, errors, tuple(phase.evaluations), details=admission.details())


def _with_object(request: Mapping[str, Any], obj: Any) -> dict[str, Any]:
    return {**request, "object": obj}
