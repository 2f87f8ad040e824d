"""`PolicySet`: every policy and binding compiled once, and `admit()` deciding a request as the API server does.

The dispatch follows k8s.io/apiserver pkg/admission/plugin/policy/validating/dispatcher.go: for each policy
that matches, each binding that matches, each param: validate; then the binding's validationActions turn
failures into a denial (the first one is the answer), warnings, or the `validation_failure` audit
annotation, and audit annotations are published as `<policy>/<key>`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kcel.env import Env
from kcel.k8s import field as fe
from kcel.k8s.admission.compilation import Compiled, CompiledPolicy, Environments, compile_policy
from kcel.k8s.admission.decision import Decision
from kcel.k8s.admission.dispatch import Admission, Resources
from kcel.k8s.admission.evaluation import Meter
from kcel.k8s.admission.loading import Loaded, load
from kcel.k8s.admission.model import Binding
from kcel.k8s.environment import NEWEST, server_version
from kcel.libs.k8s_authz import Authorizer


class PolicySet:
    """Policies and bindings compiled once; `admit` is thread-safe and may be called concurrently.

    >>> policies = PolicySet.load(["examples/admission/policies"], resources=["examples/admission/params"])
    >>> policies.problems
    []
    """

    def __init__(self, loaded: Loaded, k8s_version: str | None = None) -> None:
        self.server = server_version(k8s_version)  # the API server answering (ValueError if unsupported)
        envs = Environments(Env(k8s_version=k8s_version or NEWEST, environment="stored"))
        self.problems: list[str] = list(loaded.problems)
        with fe.answering_as(self.server):
            self.policies: tuple[CompiledPolicy, ...] = tuple(
                compile_policy(p, envs) for p in sorted(loaded.policies, key=lambda p: p.name)
            )
        self.bindings: Mapping[str, tuple[Binding, ...]] = {
            p.policy.name: tuple(sorted((b for b in loaded.bindings if b.policy_name == p.policy.name),
                                        key=lambda b: b.name))
            for p in self.policies
        }  # fmt: skip
        self.resources = Resources(tuple(loaded.objects))
        self.problems += _compile_problems(self.policies)
        known = {p.policy.name for p in self.policies}
        self.problems += [
            f"{b.source}: spec.policyName: no ValidatingAdmissionPolicy named {b.policy_name!r} was loaded"
            for b in loaded.bindings
            if b.policy_name not in known
        ]

    @classmethod
    def load(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        *,
        resources: Sequence[str | os.PathLike[str]] = (),
        k8s_version: str | None = None,
    ) -> PolicySet:
        """Policies and bindings from files/directories (YAML/JSON, several documents, `kind: List`).

        `resources`: param objects, Namespaces and CRDs (what the API server would look up); other objects in
        the policy files count as resources too. Documents that cannot be used are listed in `.problems`.
        """
        loaded = load([Path(p) for p in paths])
        loaded = load([Path(p) for p in resources], loaded)
        return cls(loaded, k8s_version)

    def admit(
        self, request: Mapping[str, Any], *, authorizer: Authorizer | None = None, deadline: float | None = None
    ) -> Decision:
        """Decide an AdmissionReview v1 `request` (raises kcel.k8s.admission.RequestError if it is malformed).

        `authorizer` answers the `authorizer` variable's checks (default: an RBAC authorizer with no bindings,
        which has no opinion); `deadline` is a time.monotonic() instant after which expressions still to run
        fail with "operation interrupted", under the policy's failure policy.
        """
        with fe.answering_as(self.server):
            return Admission(self.policies, self.bindings, self.resources, request, authorizer, Meter(deadline)).run()


def _compile_problems(policies: Sequence[CompiledPolicy]) -> list[str]:
    """What the API server's create-time validation reports: expressions that do not compile (first line)."""
    problems = []
    for compiled in policies:
        for path, item in _expressions(compiled):
            if item.program is None:
                first = item.error.splitlines()[0] if item.error else ""
                problems.append(f"{compiled.policy.source}: {path}: Invalid value: {json.dumps(item.text)}: {first}")
    return problems


def _expressions(compiled: CompiledPolicy) -> list[tuple[str, Compiled]]:
    found: list[tuple[str, Compiled]] = []
    found += [(f"spec.variables[{i}].expression", c) for i, (_, c) in enumerate(compiled.variables)]
    found += [(f"spec.matchConditions[{i}].expression", c) for i, (_, c) in enumerate(compiled.match_conditions)]
    found += [(f"spec.validations[{i}].expression", c) for i, c in enumerate(compiled.validations)]
    found += [(f"spec.validations[{i}].messageExpression", c) for i, c in enumerate(compiled.messages) if c]
    found += [(f"spec.auditAnnotations[{i}].valueExpression", c) for i, (_, c) in enumerate(compiled.audit_annotations)]
    return found
