"""The AdmissionReview a webhook sends back for a `Decision`: what `kcel serve` answers, for programs that serve
admission themselves (an ASGI app, an operator framework's webhook).

The API server checks the answer in `VerifyAdmissionResponse` (k8s.io/apiserver pkg/admission/plugin/webhook/
request): `apiVersion`/`kind` must be `admission.k8s.io/v1`/`AdmissionReview` and `response.uid` the request's uid.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"

# The API server stores a webhook's audit annotation `k` as `<webhook name>/k` and drops it unless that is a
# qualified name with exactly one slash (admission attributesRecord.checkKeyFormat): `k` must be a bare name.
_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_NAME_PART_MAX = 63


class DecisionLike(Protocol):
    """What a response needs from `kcel.k8s.admission.Decision` (a Protocol, so this module imports no engine)."""

    @property
    def allowed(self) -> bool: ...
    @property
    def code(self) -> int: ...
    @property
    def reason(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def warnings(self) -> tuple[str, ...]: ...
    @property
    def audit_annotations(self) -> Mapping[str, str]: ...
    @property
    def cost(self) -> int: ...
    @property
    def patch(self) -> tuple[Mapping[str, Any], ...]: ...


def review_response(uid: str, decision: DecisionLike) -> dict[str, Any]:
    """The AdmissionReview the API server expects back for `uid`.

    Denials carry a metav1.Status; the API server prefixes its message with
    `admission webhook "<name>" denied the request: ` (webhook errors.ToStatusErr), so ours is the bare reason.

    >>> review_response("u1", ServerDecision(False, 403, "Forbidden", "no"))["response"]["status"]
    {'status': 'Failure', 'code': 403, 'reason': 'Forbidden', 'message': 'no'}
    """
    response: dict[str, Any] = {"uid": uid, "allowed": bool(decision.allowed)}
    if not decision.allowed:
        code = decision.code if decision.code >= 400 else 403  # the API server would raise < 400 to 400 anyway
        status: dict[str, Any] = {"status": "Failure", "code": code}
        if decision.reason:
            status["reason"] = decision.reason
        if decision.message:
            status["message"] = decision.message
        response["status"] = status
    elif decision.patch:  # a mutating webhook's answer: base64 of the JSON Patch
        response["patchType"] = "JSONPatch"
        patch = json.dumps(list(decision.patch), separators=(",", ":"), ensure_ascii=False).encode()
        response["patch"] = base64.b64encode(patch).decode("ascii")
    if decision.warnings:
        response["warnings"] = list(decision.warnings)
    if decision.audit_annotations:
        response["auditAnnotations"] = {audit_key(k): v for k, v in decision.audit_annotations.items()}
    return {"apiVersion": API_VERSION, "kind": KIND, "response": response}


def audit_key(key: str) -> str:
    """An audit annotation key the API server accepts from a webhook: one name part, no slash.

    The policy engine keys annotations as the API server's own policy plugin does, `<policy>/<key>`; the
    slash becomes a dot. Keys still too long or invalid keep a readable prefix and a hash, so two never merge.

    >>> audit_key("pod-hygiene/containers")
    'pod-hygiene.containers'
    >>> audit_key("p" * 70 + "/k")[50:]
    'pppp-f3ff6857'
    """
    dotted = key.replace("/", ".")
    if len(dotted) <= _NAME_PART_MAX and _NAME_PART.fullmatch(dotted):
        return dotted
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    readable = re.sub(r"[^-A-Za-z0-9_.]", "-", dotted)[: _NAME_PART_MAX - 9].strip("-_.") or "annotation"
    return f"{readable}-{digest}"
