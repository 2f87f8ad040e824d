"""What `PolicySet.admit` answers: the API server's decision, and per policy/binding/param detail for verbose output."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kcel.k8s.admission.evaluation import PolicyDecision

CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413, "Invalid": 422}


NOT_APPLIED = frozenset({"policy-not-matched", "unbound", "binding-not-matched", "not-matched"})
"""Outcomes of a policy that did not apply to the request."""


@dataclass(frozen=True)
class Evaluation:
    """What one policy/binding/param did. `outcome`: admit, deny, error, config-error, mutated, unchanged; or why it
    did not apply: policy-not-matched (its matchConstraints), unbound (no binding), binding-not-matched (the
    binding's matchResources), not-matched (a match condition was false), with `detail` saying which test failed;
    `decisions` are the validations' own decisions."""

    policy: str
    binding: str
    param: str
    outcome: str
    decisions: tuple[PolicyDecision, ...] = ()
    detail: str = ""


@dataclass(frozen=True)
class Decision:
    """The API server's answer to a request, as far as ValidatingAdmissionPolicies decide it.

    `message` is the denial's text (`ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ...`);
    `status_message` the Status message the API server returns around it (`deployments.apps "web" is
    forbidden: ...`), `status()` the whole metav1.Status.
    """

    allowed: bool
    code: int
    reason: str
    message: str
    warnings: tuple[str, ...] = ()
    audit_annotations: Mapping[str, str] = field(default_factory=dict)
    cost: int = 0
    status_message: str = ""
    status_details: Mapping[str, str] = field(default_factory=dict)  # group, kind (the resource), name
    evaluations: tuple[Evaluation, ...] = ()
    causes: tuple[str, ...] = ()
    """Every error behind a denial, when there are several (the Status's details.causes)."""
    patched: Mapping[str, Any] | None = None
    """The object after MutatingAdmissionPolicies (None when none mutated it)."""
    patch: tuple[Mapping[str, Any], ...] = ()
    """The JSON Patch from the request's object to `patched`, as a mutating webhook would return it."""

    @property
    def applied(self) -> bool:
        """Whether any policy applied to the request (matched, bound, its match conditions true)."""
        return any(e.outcome not in NOT_APPLIED for e in self.evaluations)

    def status(self) -> dict[str, Any]:
        """The metav1.Status of a denial (empty when allowed), as the API server would send it."""
        if self.allowed:
            return {}
        details: dict[str, Any] = {k: v for k, v in self.status_details.items() if v}
        details["causes"] = [{"message": cause} for cause in self.causes or (self.message,)]
        return {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": self.status_message, "reason": self.reason, "details": details, "code": self.code,
        }  # fmt: skip

    def kubectl_text(self) -> str:
        """The error line kubectl prints for this denial ("" when allowed)."""
        if self.allowed:
            return ""
        if self.reason == "Invalid":
            kind, name = self.status_details.get("kind", ""), self.status_details.get("name", "")
            head = f'The {kind} "{name}" is invalid' if kind or name else "The request is invalid"
            return f"{head}: : {self.message}"
        return f"Error from server ({self.reason}): {self.status_message}"
