"""`PolicySet`: every policy and binding compiled once, and `admit()` deciding a request as the API server does.

The dispatch follows k8s.io/apiserver pkg/admission/plugin/policy/validating/dispatcher.go: for each policy
that matches, each binding that matches, each param: validate; then the binding's validationActions turn
failures into a denial (the first one is the answer), warnings, or the `validation_failure` audit
annotation, and audit annotations are published as `<policy>/<key>`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from kcel.env import Env
from kcel.k8s import field as fe
from kcel.k8s.admission.compilation import Compiled, CompiledPolicy, Environments, compile_policy
from kcel.k8s.admission.decision import Decision
from kcel.k8s.admission.dispatch import Admission, Resources
from kcel.k8s.admission.evaluation import Meter
from kcel.k8s.admission.loading import Loaded, load, load_documents, load_schema_files
from kcel.k8s.admission.model import APPLY_CONFIGURATION, JSON_PATCH, Binding, MutatingBinding, MutatingPolicy
from kcel.k8s.admission.mutation import (
    CompiledMutatingPolicy,
    MutatingResult,
    compile_mutating_policy,
    mutate_request,
)
from kcel.k8s.admission.served import MUTATING_KIND, VALIDATING_KIND, unserved
from kcel.k8s.admission.served import runtime_config as runtime_config_of
from kcel.k8s.crds.crd import crds_of
from kcel.k8s.environment import NEWEST, server_version
from kcel.k8s.patch.diff import diff
from kcel.k8s.patch.schemas import SchemaSource
from kcel.libs.k8s_authz import Authorizer


class PolicySet:
    """Policies and bindings compiled once; `admit` is thread-safe and may be called concurrently.

    >>> policies = PolicySet.load(["examples/admission/policies"], resources=["examples/admission/params"])
    >>> policies.problems
    []
    """

    def __init__(
        self,
        loaded: Loaded,
        k8s_version: str | None = None,
        schema_files: Sequence[Mapping[str, Any]] = (),
        runtime_config: Iterable[str] = (),
    ) -> None:
        """`runtime_config`: the alpha and beta API versions to assume switched on (kube-apiserver's
        `--runtime-config`, `admissionregistration.k8s.io/v1beta1`); others are refused as a cluster on its
        defaults refuses them (kcel.k8s.admission.served)."""
        self.server = server_version(k8s_version)  # the API server answering (ValueError if unsupported)
        self.enabled = runtime_config_of(runtime_config)
        envs = Environments(Env(k8s_version=k8s_version or NEWEST, environment="stored"))
        self.problems: list[str] = list(loaded.problems)
        policies = self._served(VALIDATING_KIND, loaded.policies)
        bindings = self._served(VALIDATING_KIND, loaded.bindings)
        with fe.answering_as(self.server):
            self.policies: tuple[CompiledPolicy, ...] = tuple(
                compile_policy(p, envs) for p in sorted(policies, key=lambda p: p.name)
            )
        self.bindings: Mapping[str, tuple[Binding, ...]] = {
            p.policy.name: tuple(sorted((b for b in bindings if b.policy_name == p.policy.name),
                                        key=lambda b: b.name))
            for p in self.policies
        }  # fmt: skip
        self.resources = Resources(tuple(loaded.objects))
        self.problems += _compile_problems(self.policies)
        # What the API server accepts but makes nothing happen: said, not an error (kcel admit prints warnings).
        self.warnings: list[str] = _dangling(self.policies, bindings, "ValidatingAdmissionPolicy")
        self._mutating(loaded, envs, schema_files)
        if not self.policies and not self.mutating_policies:
            self.warnings.append("no ValidatingAdmissionPolicy or MutatingAdmissionPolicy was loaded")

    def _served(self, kind: str, documents: Sequence[_Served]) -> list[_Served]:
        """The policies or bindings of an API version this server serves; a problem for each of the others."""
        served = []
        for document in documents:
            named = kind + ("Binding" if isinstance(document, (Binding, MutatingBinding)) else "")
            reason = unserved(named, document.api_version, self.server, self.enabled)
            if reason is None:
                served.append(document)
            else:
                self.problems.append(f"{document.source}: {reason}")
        return served

    def _mutating(self, loaded: Loaded, envs: Environments, schema_files: Sequence[Mapping[str, Any]]) -> None:
        """MutatingAdmissionPolicies of an API version this server serves, compiled; their bindings by policy."""
        documents: list[MutatingPolicy | MutatingBinding] = [*loaded.mutating_policies, *loaded.mutating_bindings]
        served = self._served(MUTATING_KIND, documents)
        with fe.answering_as(self.server):
            self.mutating_policies: tuple[CompiledMutatingPolicy, ...] = tuple(
                compile_mutating_policy(p, envs)
                for p in sorted((p for p in served if isinstance(p, MutatingPolicy)), key=lambda p: p.name)
            )
        self.mutating_bindings: Mapping[str, tuple[MutatingBinding, ...]] = {
            p.policy.name: tuple(sorted((b for b in served if isinstance(b, MutatingBinding)
                                         and b.policy_name == p.policy.name), key=lambda b: b.name))
            for p in self.mutating_policies
        }  # fmt: skip
        for compiled in self.mutating_policies:
            self.problems += _problems(compiled.policy.source, _mutating_expressions(compiled))
        mutating_bindings = [b for b in served if isinstance(b, MutatingBinding)]
        self.warnings += _dangling(self.mutating_policies, mutating_bindings, "MutatingAdmissionPolicy")
        crds = [o for o in loaded.objects if o.get("kind") == "CustomResourceDefinition"]
        self.schemas = SchemaSource(f"{self.server[0]}.{self.server[1]}", schema_files, crds)
        self.crds = crds_of(crds)

    @classmethod
    def load(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        *,
        resources: Sequence[str | os.PathLike[str]] = (),
        schemas: Sequence[str | os.PathLike[str]] = (),
        k8s_version: str | None = None,
        runtime_config: Iterable[str] = (),
    ) -> PolicySet:
        """Validating and mutating policies and bindings from files/directories (YAML/JSON, several documents,
        `kind: List`).

        `resources`: param objects, Namespaces and CRDs (what the API server would look up); other objects in
        the policy files count as resources too. `schemas`: OpenAPI v3 documents of built-in kinds
        (`kubectl get --raw /openapi/v3/apis/apps/v1`) for apply configurations, when the `kcel[schemas]` extra
        is not installed. `runtime_config`: alpha and beta API versions to assume switched on
        (`admissionregistration.k8s.io/v1beta1`). Documents that cannot be used are listed in `.problems`.
        """
        loaded = load([Path(p) for p in paths])
        loaded = load([Path(p) for p in resources], loaded)
        schema_files, problems = load_schema_files([Path(p) for p in schemas])
        loaded.problems += problems
        return cls(loaded, k8s_version, schema_files, runtime_config)

    @classmethod
    def from_manifests(
        cls,
        policies: str | Iterable[Mapping[str, Any]],
        *,
        resources: str | Iterable[Mapping[str, Any]] = (),
        k8s_version: str | None = None,
        runtime_config: Iterable[str] = (),
    ) -> PolicySet:
        """Policies and bindings (with params, Namespaces and CRDs in `resources`) already in memory: YAML or JSON
        text, or decoded objects, as a program that builds or fetches them has them.

        >>> PolicySet.from_manifests([]).warnings
        ['no ValidatingAdmissionPolicy or MutatingAdmissionPolicy was loaded']
        """
        loaded = load_documents(policies, source="<policies>")
        return cls(load_documents(resources, loaded, source="<resources>"), k8s_version, runtime_config=runtime_config)

    def admit(
        self, request: Mapping[str, Any], *, authorizer: Authorizer | None = None, deadline: float | None = None
    ) -> Decision:
        """Decide an AdmissionReview v1 `request` as the API server's admission chain does: the
        MutatingAdmissionPolicies mutate the object, then the ValidatingAdmissionPolicies decide on the result
        (raises kcel.k8s.admission.RequestError if the request is malformed).

        `authorizer` answers the `authorizer` variable's checks (default: an RBAC authorizer with no bindings,
        which has no opinion); `deadline` is a time.monotonic() instant after which expressions still to run
        fail with "operation interrupted", under the policy's failure policy.
        """
        return self._decide(request, authorizer, deadline, mutate=True, validate=True)

    def mutate(
        self, request: Mapping[str, Any], *, authorizer: Authorizer | None = None, deadline: float | None = None
    ) -> Decision:
        """Only the MutatingAdmissionPolicies (what a mutating webhook answers): the patch, or the denial."""
        return self._decide(request, authorizer, deadline, mutate=True, validate=False)

    def validate(
        self, request: Mapping[str, Any], *, authorizer: Authorizer | None = None, deadline: float | None = None
    ) -> Decision:
        """Only the ValidatingAdmissionPolicies, on the object as given (a validating webhook's answer)."""
        return self._decide(request, authorizer, deadline, mutate=False, validate=True)

    def _decide(
        self, request: Mapping[str, Any], authorizer: Authorizer | None, deadline: float | None, *, mutate: bool,
        validate: bool,
    ) -> Decision:  # fmt: skip
        with fe.answering_as(self.server):
            meter = Meter(deadline)
            policies = self.mutating_policies if mutate else ()
            mutated = mutate_request(
                policies, self.mutating_bindings, self.resources, self.schemas, request, authorizer, meter, self.crds
            )
            if mutated.rejected is not None or mutated.errors:
                return _mutation_denied(mutated, meter)
            if validate:
                decision = Admission(
                    self.policies, self.bindings, self.resources, mutated.request, authorizer, meter
                ).run()
            else:
                decision = Decision(True, 200, "", "", cost=meter.spent)
        original, final = request.get("object"), mutated.request.get("object")
        if mutated.evaluations:
            decision = replace(decision, evaluations=mutated.evaluations + decision.evaluations)
        if final == original:
            return decision
        return replace(decision, patched=final, patch=tuple(diff(original, final)))


class _Versioned(Protocol):
    @property
    def api_version(self) -> str: ...
    @property
    def source(self) -> str: ...


_Served = TypeVar("_Served", bound=_Versioned)


def _mutation_denied(mutated: MutatingResult, meter: Meter) -> Decision:
    """The API server's answer when the mutating phase rejects the request (generic Dispatch's status)."""
    evaluations = mutated.evaluations
    if mutated.rejected is not None:
        rejected, message = mutated.rejected, str(mutated.rejected)
        return Decision(False, rejected.code, rejected.reason, message, cost=meter.spent, status_message=message,
                        status_details=mutated.details, evaluations=evaluations)  # fmt: skip
    first = mutated.errors[0]
    message = first.text()
    return Decision(
        False, 403, first.reason or "Forbidden", message, cost=meter.spent, status_message=message,
        evaluations=evaluations, causes=tuple(e.text() for e in mutated.errors), status_details=mutated.details,
    )  # fmt: skip


def _compile_problems(policies: Sequence[CompiledPolicy]) -> list[str]:
    """What the API server's create-time validation reports: expressions that do not compile (first line)."""
    return [problem for compiled in policies for problem in _problems(compiled.policy.source, _expressions(compiled))]


def _problems(source: str, expressions: list[tuple[str, Compiled]]) -> list[str]:
    problems = []
    for path, item in expressions:
        if item.program is None:
            first = item.error.splitlines()[0] if item.error else ""
            problems.append(f"{source}: {path}: Invalid value: {json.dumps(item.text)}: {first}")
    return problems


def _mutating_expressions(compiled: CompiledMutatingPolicy) -> list[tuple[str, Compiled]]:
    keys = {APPLY_CONFIGURATION: "applyConfiguration", JSON_PATCH: "jsonPatch"}
    found: list[tuple[str, Compiled]] = []
    found += [(f"spec.variables[{i}].expression", c) for i, (_, c) in enumerate(compiled.variables)]
    found += [(f"spec.matchConditions[{i}].expression", c) for i, (_, c) in enumerate(compiled.match_conditions)]
    found += [
        (f"spec.mutations[{i}].{keys[m.patch_type]}.expression", c)
        for i, (m, c) in enumerate(zip(compiled.policy.mutations, compiled.mutations, strict=True))
    ]
    return found


def _expressions(compiled: CompiledPolicy) -> list[tuple[str, Compiled]]:
    found: list[tuple[str, Compiled]] = []
    found += [(f"spec.variables[{i}].expression", c) for i, (_, c) in enumerate(compiled.variables)]
    found += [(f"spec.matchConditions[{i}].expression", c) for i, (_, c) in enumerate(compiled.match_conditions)]
    found += [(f"spec.validations[{i}].expression", c) for i, c in enumerate(compiled.validations)]
    found += [(f"spec.validations[{i}].messageExpression", c) for i, c in enumerate(compiled.messages) if c]
    found += [(f"spec.auditAnnotations[{i}].valueExpression", c) for i, (_, c) in enumerate(compiled.audit_annotations)]
    return found


def _dangling(policies: Sequence[Any], bindings: Sequence[Any], kind: str) -> list[str]:
    """Bindings naming no policy loaded, and policies no binding names: the API server accepts both, and they do
    nothing."""
    known = {p.policy.name for p in policies}
    bound = {b.policy_name for b in bindings}
    return [
        f"{b.source}: spec.policyName: no {kind} named {b.policy_name!r} was loaded: the binding does nothing"
        for b in bindings
        if b.policy_name not in known
    ] + [
        f"{p.policy.source}: no {kind}Binding names {p.policy.name!r}: the policy does nothing"
        for p in policies
        if p.policy.name not in bound
    ]
