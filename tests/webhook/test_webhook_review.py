"""AdmissionReview parsing and answers: every malformed body gets a definite 4xx, every answer passes the API server."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from kcel.k8s.admission.response import audit_key, review_response
from kcel.webhook.app import parse_go_duration
from kcel.webhook.review import (
    MAX_BODY_BYTES,
    MAX_OBJECT_BYTES,
    ReviewError,
    ServerDecision,
    failure_decision,
    invalid_decision,
    parse_review,
    status_body,
)


def review(**request: Any) -> dict[str, Any]:
    base = {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "operation": "CREATE",
        "namespace": "team-a",
        "name": "web",
        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}},
    }
    base.update(request)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": base}


def body(document: object) -> bytes:
    return json.dumps(document).encode()


def test_a_well_formed_review_is_parsed() -> None:
    parsed = parse_review(body(review()))
    assert (parsed.uid, parsed.kind, parsed.resource, parsed.operation) == (
        "705ab4f5-6393-11e8-b7cc-42010a800002",
        "v1/Pod",
        "v1/pods",
        "CREATE",
    )
    assert (parsed.namespace, parsed.name) == ("team-a", "web")
    assert parsed.request["object"]["metadata"]["name"] == "web"


NO_UID = [
    (b"", 400, "request body is empty"),
    (b"{not json", 400, "request body is not valid JSON"),
    (b"\xff\xfe", 400, "request body is not valid JSON"),
    (b"[1, 2]", 400, "expected a JSON object, got an array"),
    (b"null", 400, "expected a JSON object, got null"),
    (b"[" * 100_000, 400, "request body is not valid JSON"),  # deep nesting: RecursionError, not a crash
    (body({**review(), "apiVersion": "admission.k8s.io/v1beta1"}), 400, "expected apiVersion 'admission.k8s.io/v1'"),
    (body({**review(), "kind": "Pod"}), 400, "kind 'Pod'"),
    (body({"spec": {}}), 400, "the body is not an AdmissionReview: no apiVersion and kind"),
    (body({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}), 400, "AdmissionReview has no request"),
    (body({**review(), "request": "x"}), 400, "request must be an object"),
    (body(review(uid=None)), 400, "request.uid is missing"),
    (body(review(uid="")), 400, "request.uid is missing"),
    (body(review(uid=7)), 400, "request.uid must be a string"),
]


@pytest.mark.parametrize(("raw", "status", "message"), NO_UID, ids=[m for _, _, m in NO_UID])
def test_bodies_without_a_usable_uid_get_a_plain_http_error(raw: bytes, status: int, message: str) -> None:
    with pytest.raises(ReviewError) as caught:
        parse_review(raw)
    assert caught.value.status == status
    assert caught.value.uid is None
    assert message in caught.value.message


WITH_UID = [
    (review(operation="PATCH"), 400, "request.operation must be one of CONNECT, CREATE, DELETE, UPDATE, got 'PATCH'"),
    (review(operation=None), 400, "got None"),
    (review(kind="Pod"), 400, "request.kind must be an object"),
    (review(kind={"group": "", "version": "v1"}), 400, "request.kind must be an object"),
    (review(object=[1]), 400, "request.object must be an object or null, got an array"),
    (review(oldObject="x"), 400, "request.oldObject must be an object or null, got a string"),
]


@pytest.mark.parametrize(("document", "status", "message"), WITH_UID, ids=[m for _, _, m in WITH_UID])
def test_unusable_requests_with_a_uid_are_denied_in_an_admission_review(
    document: dict[str, Any], status: int, message: str
) -> None:
    with pytest.raises(ReviewError) as caught:
        parse_review(body(document))
    assert caught.value.uid == "705ab4f5-6393-11e8-b7cc-42010a800002"
    assert (caught.value.status, message in caught.value.message) == (status, True)
    answer = review_response(caught.value.uid, invalid_decision(caught.value))["response"]
    assert answer["allowed"] is False
    assert answer["status"]["code"] == status and answer["status"]["reason"] == "BadRequest"


def test_a_request_object_over_3_mib_is_denied_with_413() -> None:
    big = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"blob": "x" * MAX_OBJECT_BYTES}}
    with pytest.raises(ReviewError) as caught:
        parse_review(body(review(object=big)))
    assert caught.value.status == 413 and caught.value.uid is not None
    assert caught.value.message.startswith("request.object is 3145") and "the limit is 3145728" in caught.value.message


def test_two_objects_just_under_3_mib_each_fit_in_one_review() -> None:
    half = {"data": {"blob": "x" * (MAX_OBJECT_BYTES - 100)}}
    parsed = parse_review(body(review(operation="UPDATE", object=half, oldObject=half)))
    assert parsed.operation == "UPDATE"


def test_a_body_over_7_mib_is_refused_without_decoding() -> None:
    with pytest.raises(ReviewError) as caught:
        parse_review(b" " * (MAX_BODY_BYTES + 1))
    assert caught.value.status == 413 and caught.value.uid is None


def test_an_allowed_answer_is_minimal() -> None:
    answer = review_response("u1", ServerDecision(True, 200, "", ""))
    assert answer == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": "u1", "allowed": True},
    }


def test_a_denial_carries_status_warnings_and_audit_annotations() -> None:
    decision = ServerDecision(
        False, 422, "Invalid", "replicas must be at most 5", ("deprecated field",), {"policy/replicas": "7"}
    )
    assert review_response("u1", decision)["response"] == {
        "uid": "u1",
        "allowed": False,
        "status": {"status": "Failure", "code": 422, "reason": "Invalid", "message": "replicas must be at most 5"},
        "warnings": ["deprecated field"],
        "auditAnnotations": {"policy.replicas": "7"},
    }


def test_a_denial_never_carries_a_success_code() -> None:
    # The API server would raise a code under 400 to 400 (webhook errors.ToStatusErr); we say 403 ourselves.
    status = review_response("u1", ServerDecision(False, 200, "", "no"))["response"]["status"]
    assert status == {"status": "Failure", "code": 403, "message": "no"}


def test_failure_policy_fail_denies_and_ignore_admits_with_a_warning() -> None:
    closed = failure_decision("policy evaluation did not finish within 10s", fail_closed=True, code=504)
    assert (closed.allowed, closed.code, closed.reason) == (False, 504, "Timeout")
    opened = failure_decision("boom", fail_closed=False)
    assert opened.allowed and opened.warnings == ("kcel webhook failure ignored (failurePolicy Ignore): boom",)


def test_status_body_is_a_metav1_status() -> None:
    assert status_body(413, "too big") == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too big", "reason": "RequestEntityTooLarge", "code": 413,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("10s", 10.0), ("1m0s", 60.0), ("1.5s", 1.5), ("250ms", 0.25), ("1h2m3s", 3723.0), ("", None), ("10", None),
     ("10s junk", None), ("-1s", None)],
)  # fmt: skip
def test_the_api_servers_timeout_parameter_is_a_go_duration(text: str, seconds: float | None) -> None:
    assert parse_go_duration(text) == seconds


@pytest.mark.parametrize(
    ("key", "expected"),
    [("policy/key", "policy.key"), ("plain", "plain"), ("a/b/c", "a.b.c"),
     ("validation.policy.admission.k8s.io/validation_failure", "validation.policy.admission.k8s.io.validation_failure"),
     ("x" * 60 + "/key", "x" * 54 + "-51f53a3c"), ("odd key!/", "odd-key-1e12d6ea")],
)  # fmt: skip
def test_audit_keys_become_one_name_part_the_api_server_accepts(key: str, expected: str) -> None:
    # The API server stores "<webhook>/<key>" and requires exactly one slash and a qualified name.
    got = audit_key(key)
    assert got == expected
    assert len(got) <= 63 and "/" not in got
    assert re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", got)
