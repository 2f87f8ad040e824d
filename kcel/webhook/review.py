"""AdmissionReview v1 in and out: parse what the API server posts, build what it accepts back.

Nothing here knows about HTTP servers or policies, so every rule about the wire format is testable on plain
bytes and dicts. The API server checks a validating webhook's answer in `VerifyAdmissionResponse`
(k8s.io/apiserver pkg/admission/plugin/webhook/request): `apiVersion`/`kind` must be
`admission.k8s.io/v1`/`AdmissionReview` and `response.uid` must equal the request's uid. A body we cannot
read a uid from therefore cannot get an AdmissionReview back and is answered with a plain HTTP 4xx and a
`Status` object; anything later gets a proper AdmissionReview.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from kcel.k8s.admission.response import API_VERSION, KIND

# The API server refuses request bodies over 3 MiB (MaxRequestBodyBytes in k8s.io/apiserver
# pkg/server/config.go), so no object or oldObject it sends can be larger.
MAX_OBJECT_BYTES = 3 * 1024 * 1024
# A review holds at most two such objects plus a small envelope (user info, options); controller-runtime's
# admission handler (pkg/webhook/admission/http.go) reads at most 7 MiB for that reason, and so do we.
MAX_BODY_BYTES = 7 * 1024 * 1024


OPERATIONS = frozenset({"CREATE", "UPDATE", "DELETE", "CONNECT"})

# metav1.StatusReason values for the codes this server answers with.
REASONS = {
    400: "BadRequest",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    408: "Timeout",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ReviewError(Exception):
    """The body is not an AdmissionReview this server can answer.

    `uid` is set when the request's uid could be read: then the caller answers with an AdmissionReview that
    denies (the API server shows `message`); without it only a plain HTTP `status` with a `Status` body is possible.
    """

    def __init__(self, status: int, message: str, uid: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.uid = uid


@dataclass(frozen=True)
class Review:
    """One parsed AdmissionReview request: the `request` object as JSON plus the fields logs and metrics use."""

    uid: str
    request: Mapping[str, Any]
    operation: str
    kind: str  # group/version/Kind, e.g. "apps/v1/Deployment" ("v1/Pod" for the core group)
    resource: str
    namespace: str
    name: str


@dataclass(frozen=True)
class ServerDecision:
    """A decision the server makes itself (bad input, timeout, crash), shaped like the engine's `Decision`."""

    allowed: bool
    code: int
    reason: str
    message: str
    warnings: tuple[str, ...] = ()
    audit_annotations: Mapping[str, str] = field(default_factory=dict)
    cost: int = 0
    patch: tuple[Mapping[str, Any], ...] = ()


def parse_review(body: bytes) -> Review:
    """Decode and check an AdmissionReview body; raise `ReviewError` with the answer to give when it is unusable.

    >>> gvk = b'{"group": "apps", "version": "v1", "kind": "Deployment"}'
    >>> request = b'{"uid": "u1", "operation": "CREATE", "kind": ' + gvk + b'}'
    >>> envelope = b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": '
    >>> parse_review(envelope + request + b"}").kind
    'apps/v1/Deployment'
    """
    if len(body) > MAX_BODY_BYTES:
        raise ReviewError(413, f"request body too large: {len(body)} bytes, the limit is {MAX_BODY_BYTES}")
    if not body.strip():
        raise ReviewError(400, "request body is empty")
    try:
        document = decode(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise ReviewError(400, f"request body is not valid JSON: {_short(exc)}") from None
    if not isinstance(document, dict):
        raise ReviewError(400, f"expected a JSON object, got {_json_type(document)}")
    _check_type_meta(document)
    request = document.get("request")
    if not isinstance(request, dict):
        missing = "request" not in document or request is None
        raise ReviewError(400, "AdmissionReview has no request" if missing else "request must be an object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewError(400, "request.uid is missing" if uid in (None, "") else "request.uid must be a string")
    return _review(uid, request, len(body))


def _check_type_meta(document: Mapping[str, Any]) -> None:
    """Only admission.k8s.io/v1 is served; the ValidatingWebhookConfiguration must list admissionReviewVersions [v1]."""
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if api_version is None and kind is None:
        raise ReviewError(400, f"the body is not an AdmissionReview: no apiVersion and kind (expected apiVersion "
                               f"{API_VERSION!r} and kind {KIND!r}, as the API server sends)")  # fmt: skip
    if api_version != API_VERSION or kind != KIND:
        found = ", ".join(f"{name} {value!r}" for name, value in (("apiVersion", api_version), ("kind", kind)) if value)
        raise ReviewError(400, f"expected apiVersion {API_VERSION!r} and kind {KIND!r}, got {found} (the webhook "
                               f"configuration must list admissionReviewVersions: [v1])")  # fmt: skip


def _review(uid: str, request: dict[str, Any], body_size: int) -> Review:
    """Check the request fields the policy engine relies on; problems here deny with the uid known."""
    operation = request.get("operation")
    if operation not in OPERATIONS:
        raise ReviewError(
            400, f"request.operation must be one of {', '.join(sorted(OPERATIONS))}, got {operation!r}", uid
        )
    gvk = request.get("kind")
    if not isinstance(gvk, dict) or not isinstance(gvk.get("kind"), str) or not gvk["kind"]:
        raise ReviewError(400, "request.kind must be an object with group, version and kind", uid)
    for key in ("object", "oldObject"):
        value = request.get(key)
        if value is not None and not isinstance(value, dict):
            raise ReviewError(400, f"request.{key} must be an object or null, got {_json_type(value)}", uid)
        # Only a body over the limit can hold an object over it: skip the re-encoding for everyday sizes.
        if value and body_size > MAX_OBJECT_BYTES:
            size = len(json.dumps(value, separators=(",", ":")).encode())
            if size > MAX_OBJECT_BYTES:
                raise ReviewError(413, f"request.{key} is {size} bytes, the limit is {MAX_OBJECT_BYTES}", uid)
    return Review(
        uid=uid,
        request=request,
        operation=operation,
        kind="/".join(str(gvk.get(k) or "") for k in ("group", "version", "kind")).lstrip("/"),
        resource=_resource(request.get("resource")),
        namespace=str(request.get("namespace") or ""),
        name=str(request.get("name") or ""),
    )


def _resource(value: object) -> str:
    if not isinstance(value, dict):
        return ""
    return "/".join(str(value.get(k) or "") for k in ("group", "version", "resource")).lstrip("/")


def status_body(status: int, message: str) -> dict[str, Any]:
    """A metav1.Status for answers that cannot be AdmissionReviews (no uid): what the API server's client decodes."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": REASONS.get(status, "BadRequest"),
        "code": status,
    }


def invalid_decision(error: ReviewError) -> ServerDecision:
    """A denial for a review whose uid is known but whose request is unusable (bad fields, oversized object)."""
    return ServerDecision(False, error.status, REASONS.get(error.status, "BadRequest"), error.message)


def failure_decision(message: str, *, fail_closed: bool, code: int = 500) -> ServerDecision:
    """The answer when the server itself fails (timeout, crash, no policies): deny, or admit with a warning.

    This mirrors what the API server does with a webhook's `failurePolicy`: Fail rejects the request with the
    error, Ignore lets it through (the API server logs; we add a warning so the client sees it too).
    """
    if fail_closed:
        return ServerDecision(False, code, REASONS.get(code, "InternalError"), message)
    return ServerDecision(
        True, 200, "", "", warnings=(f"kcel webhook failure ignored (failurePolicy Ignore): {message}",)
    )


def decode(body: bytes) -> Any:
    """JSON by orjson (several times faster than `json`); what it refuses (an integer past 64 bits, nesting past
    1,024) goes to `json`, which takes what Go's decoder takes or says why not."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


def encode(document: Mapping[str, Any]) -> bytes:
    """Compact JSON, non-ASCII messages kept readable (UTF-8), by orjson; `json` for what it refuses."""
    try:
        return orjson.dumps(document)
    except TypeError:  # an integer past 64 bits
        return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}.get(
        type(value), "an object"
    )


def _short(exc: BaseException, limit: int = 200) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."
