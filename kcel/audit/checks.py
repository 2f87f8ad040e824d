"""Each stored object checked as the API server would check it after the change: through the admission policies
(an update that changes nothing, old = new; and a create of the same object), and, when a new CRD serves its kind,
through that CRD (a create; an update that changes nothing, where ratcheting applies; the fields it would prune).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from kcel.k8s.admission.decision import NOT_APPLIED
from kcel.k8s.admission.request import request_from_objects

if TYPE_CHECKING:
    from kcel.k8s.admission.decision import Decision, Evaluation
    from kcel.k8s.admission.policyset import PolicySet
    from kcel.k8s.crds.crd import CRD

# Metadata the API server sets, which a create of the same object would not carry.
SERVER_SET = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink",
              "deletionTimestamp", "deletionGracePeriodSeconds")  # fmt: skip
PASS, FAIL, WARN, ERROR = "pass", "fail", "warn", "error"  # PolicyReport's results
AUDIT = "audit"  # a failure a binding only audits (validationActions: [Audit]); a PolicyReport says fail


@dataclass(frozen=True)
class Subject:
    """The object a result is about (a PolicyReport's corev1.ObjectReference)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str = ""

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Subject:
        found = obj.get("metadata")
        metadata: Mapping[str, Any] = found if isinstance(found, dict) else {}
        name = metadata.get("name") or metadata.get("generateName") or ""
        namespace, uid = metadata.get("namespace") or "", metadata.get("uid") or ""
        return cls(str(obj.get("apiVersion", "")), str(obj.get("kind", "")), str(namespace), str(name), str(uid))

    def text(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


@dataclass(frozen=True)
class Result:
    """One policy's (or the CRD's) verdict on one object for one operation."""

    policy: str  # `ValidatingAdmissionPolicy/replica-limit`, `CustomResourceDefinition/widgets.example.com`
    rule: str  # the binding (and param), or the CRD's check: create, update, prune
    operation: str  # CREATE or UPDATE
    result: str  # pass, fail, warn, error
    message: str
    subject: Subject
    where: str = ""  # the object's place in the snapshot
    properties: tuple[tuple[str, str], ...] = ()
    order: int = 0  # the object's position in the snapshot, so that examples are the first ones whatever the workers


def as_created(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object as a create would send it again: without the metadata the API server sets."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return dict(obj)
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k not in SERVER_SET}}


class PolicyCheck:
    """The admission policies of a PolicySet, applied to stored objects."""

    def __init__(self, policies: PolicySet, user: str = "", groups: Sequence[str] = ()) -> None:
        self.policies, self.user, self.groups = policies, user, tuple(groups)
        self.actions = {(b.policy_name, b.name): b.validation_actions for bs in policies.bindings.values() for b in bs}
        self.failure = {p.policy.name: p.policy.failure_policy for p in policies.policies}
        self.mutating = {p.policy.name for p in policies.mutating_policies}

    def results(self, obj: Mapping[str, Any], where: str, order: int = 0) -> list[Result]:
        subject, found = Subject.of(obj), []
        for operation, new, old in (("UPDATE", obj, obj), ("CREATE", as_created(obj), None)):
            try:
                request = request_from_objects(new, old, operation=operation, user=self.user, groups=self.groups,
                                               crds=self.policies.crds)  # fmt: skip
                decision = self.policies.admit(request)
            except ValueError as err:  # a request the API server would not build
                found.append(Result("", "", operation, ERROR, str(err), subject, where, order=order))
                continue
            found += [replace(self._result(e, decision, operation, subject, where), order=order)
                      for e in decision.evaluations if e.outcome not in NOT_APPLIED]  # fmt: skip
        return found

    def _result(self, e: Evaluation, decision: Decision, operation: str, subject: Subject, where: str) -> Result:
        rule, param = e.binding, ((("param", e.param),) if e.param else ())
        if e.policy in self.mutating and e.outcome in ("mutated", "unchanged", "error"):
            policy = f"MutatingAdmissionPolicy/{e.policy}"
            if e.outcome == "mutated":
                changes = ", ".join(f"{p['op']} {p['path']}" for p in decision.patch) or "the object"
                return Result(policy, rule, operation, WARN, f"would change: {changes}", subject, where,
                              (("category", "mutation"),))  # fmt: skip
            outcome = ERROR if e.outcome == "error" else PASS
            return Result(policy, rule, operation, outcome, e.detail, subject, where, param)
        policy = f"ValidatingAdmissionPolicy/{e.policy}"
        messages = "; ".join(d.message for d in e.decisions if d.evaluation != "admit") or e.detail
        if e.outcome == "admit":
            return Result(policy, rule, operation, PASS, "", subject, where, param)
        if e.outcome == "deny":
            actions = self.actions.get((e.policy, e.binding), ())
            properties = (*param, ("validationActions", ",".join(actions)))
            outcome = FAIL if "Deny" in actions else WARN if "Warn" in actions else AUDIT
            return Result(policy, rule, operation, outcome, messages, subject, where, properties)
        properties = (*param, ("failurePolicy", self.failure.get(e.policy, "")))
        return Result(policy, rule, operation, ERROR, messages, subject, where, properties)


class CRDCheck:
    """A new CRD (or a new version of one) applied to the stored objects of its kind."""

    def __init__(self, crd: CRD, k8s_version: str | None = None) -> None:
        self.crd, self.k8s_version = crd, k8s_version
        self.policy = f"CustomResourceDefinition/{crd.name}"

    def serves(self, obj: Mapping[str, Any]) -> bool:
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        return obj.get("kind") == self.crd.kind and group == self.crd.group

    def results(self, obj: Mapping[str, Any], where: str, order: int = 0) -> list[Result]:
        from kcel.k8s.crds.objects import validate_object

        subject = Subject.of(obj)
        namespace = subject.namespace or "default"
        try:
            created = validate_object(self.crd, as_created(obj), field_validation="Warn", namespace=namespace,
                                      k8s_version=self.k8s_version)  # fmt: skip
            updated = validate_object(self.crd, obj, obj, field_validation="Warn", namespace=namespace,
                                      k8s_version=self.k8s_version)  # fmt: skip
        except ValueError as err:  # its version is not served
            return [Result(self.policy, "version", "UPDATE", ERROR, str(err), subject, where, order=order)]
        found = [
            Result(self.policy, "create", "CREATE", FAIL if created.errors else PASS, created.message, subject, where),
            Result(self.policy, "update", "UPDATE", FAIL if updated.errors else PASS, updated.message, subject, where),
        ]
        if not updated.errors and updated.object is not None:
            pruned = sorted(_removed(obj, updated.object))
            if pruned:
                found.append(Result(self.policy, "prune", "UPDATE", WARN, f"would prune {', '.join(pruned)}", subject,
                                    where, (("category", "pruning"),)))  # fmt: skip
        return [replace(result, order=order) for result in found]


def _removed(before: Any, after: Any, path: str = "") -> list[str]:
    """The fields of `before` that `after` lacks (metadata aside: the API server keeps its own)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    found = []
    for key, value in before.items():
        child = f"{path}.{key}" if path else key
        if child == "metadata":
            continue
        if key not in after:
            found.append(child)
        elif isinstance(value, list) and isinstance(after[key], list) and len(value) == len(after[key]):
            found += [name for i, item in enumerate(value) for name in _removed(item, after[key][i], f"{child}[{i}]")]
        else:
            found += _removed(value, after[key], child)
    return found
