"""ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1) evaluated as the Kubernetes API server does.

`PolicySet.load(paths, resources=...)` reads policies, bindings, params and Namespaces and compiles every
expression once; `PolicySet.admit(request)` decides an AdmissionReview `request` and returns a `Decision`
with the API server's code, reason and message, warnings and audit annotations. `request_from_objects`
builds such a request from manifests.
"""

from kcel.k8s.admission.decision import Decision, Evaluation
from kcel.k8s.admission.evaluation import PolicyDecision
from kcel.k8s.admission.loading import PolicyLoadError
from kcel.k8s.admission.policyset import PolicySet
from kcel.k8s.admission.request import RequestError, request_from_objects

__all__ = [
    "Decision", "Evaluation", "PolicyDecision", "PolicyLoadError", "PolicySet", "RequestError", "request_from_objects",
]  # fmt: skip
