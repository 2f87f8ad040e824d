"""A kopf (Python operator framework) validating admission handler that enforces the policies of
examples/admission/policies with kcel, as the API server would: in an operator that already runs kopf's webhook
server, Deployments are checked before they are stored, with the API server's messages.

    kopf run examples/embedding/kopf_handler.py   # with settings.admission.server configured, see kopf's docs
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import kopf

from kcel.k8s.admission import PolicySet, request_from_objects

ADMISSION = Path(__file__).resolve().parent.parent / "admission"
POLICIES = PolicySet.load([ADMISSION / "policies"], resources=[ADMISSION / "params"])


@kopf.on.validate("apps", "v1", "deployments", id="kcel-policies")
def enforce_policies(
    body: kopf.Body, old: kopf.Body | None, operation: str, userinfo: Mapping[str, Any], warnings: list[str], **_: Any
) -> None:
    """kopf calls this with the AdmissionReview's parts; raising AdmissionError denies with that message and code."""
    new = None if operation == "DELETE" else dict(body)  # kopf's body is the old object on a delete
    request = request_from_objects(
        new, dict(old) if old is not None else None, operation=operation,
        user=str(userinfo.get("username", "")), groups=tuple(userinfo.get("groups") or ()),
    )  # fmt: skip
    decision = POLICIES.admit(request)
    warnings.extend(decision.warnings)
    if not decision.allowed:
        raise kopf.AdmissionError(decision.message, code=decision.code)
