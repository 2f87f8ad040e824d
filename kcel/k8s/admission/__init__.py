"""ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) evaluated as the Kubernetes API server does.

`PolicySet.load(paths, resources=...)` reads policies, bindings, params and Namespaces and compiles every
expression once; `PolicySet.admit(request)` decides an AdmissionReview `request` and returns a `Decision`
with the API server's code, reason and message, warnings and audit annotations. `request_from_objects`
builds such a request from manifests; `PolicySet.from_manifests` takes policies already in memory, and
`review_response(uid, decision)` is the AdmissionReview a webhook answers with (what `kcel serve` sends).

The names are imported on first use, so that `kcel.k8s.admission.command` stays cheap to import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kcel.k8s.admission.decision import Decision, Evaluation
    from kcel.k8s.admission.evaluation import PolicyDecision
    from kcel.k8s.admission.loading import PolicyLoadError
    from kcel.k8s.admission.policyset import PolicySet
    from kcel.k8s.admission.request import RequestError, request_from_objects
    from kcel.k8s.admission.response import review_response

_EXPORTS = {
    "Decision": "decision", "Evaluation": "decision", "PolicyDecision": "evaluation", "PolicyLoadError": "loading",
    "PolicySet": "policyset", "RequestError": "request", "request_from_objects": "request",
    "review_response": "response",
}  # fmt: skip

__all__ = [
    "Decision", "Evaluation", "PolicyDecision", "PolicyLoadError", "PolicySet", "RequestError", "request_from_objects",
    "review_response",
]  # fmt: skip


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
