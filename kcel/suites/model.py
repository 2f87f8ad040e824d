"""What a suite file holds once read: suites, their cases and expectations, as frozen values the runner takes.

A suite is one YAML document of a `*.kcel-test.yaml` file. It tests one thing: CRDs (`crds:`), admission
policies (`policies:`), or one of the other places Kubernetes runs CEL: webhook match conditions (`webhooks:`),
DRA device selectors (`devices:`), structured authentication (`authentication:`) or authorization
(`authorization:`). Its cases carry what to send (an object and the request's options; for the other surfaces
a `SurfaceInput`: a claim, a token, a SubjectAccessReview) and what must come back. Paths are resolved against
the suite file's folder when the suite is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kcel.k8s import field as fe
from kcel.suites.fields import Where

CRD, ADMISSION = "crd", "admission"
WEBHOOKS, DEVICES, AUTHENTICATION, AUTHORIZATION = "webhooks", "devices", "authentication", "authorization"


@dataclass(frozen=True)
class ObjectInput:
    """An object a case sends; `strict_errors` are the duplicate fields its file had (what Strict rejects)."""

    value: Mapping[str, Any]
    strict_errors: tuple[str, ...] = ()
    path: fe.Path = fe.Path()  # the suite field it came from (`cases[2].patch`), for messages


@dataclass(frozen=True)
class CRDExpect:
    """What the API server must answer to a custom resource: valid or not, texts its message contains,
    warnings, and the object as stored (after pruning and defaulting)."""

    valid: bool
    errors: tuple[str, ...] = ()
    reason: str | None = None
    warnings: tuple[str, ...] | None = None  # None: not checked; (): there must be none
    stored: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class AdmissionExpect:
    """What the admission policies must decide: allowed or denied (reason, code, a text of the message),
    warnings and audit annotations."""

    allowed: bool
    message: str | None = None
    reason: str | None = None
    code: int | None = None
    warnings: tuple[str, ...] | None = None
    audit_annotations: Mapping[str, str] | None = None
    patched: Mapping[str, Any] | None = None  # the object after the MutatingAdmissionPolicies
    patch: tuple[Mapping[str, Any], ...] | None = None  # the JSON Patch a webhook would return (): not mutated


@dataclass(frozen=True)
class WebhookExpect:
    """Which webhooks the request is sent to (mutating ones first, each kind in the API server's order), the text
    of the 403 a match condition's error under failurePolicy Fail answers (None: not rejected), and why others
    are not called (webhook name -> a text of `reason: detail`)."""

    called: tuple[str, ...] | None = None
    rejected: str | None = None
    skipped: Mapping[str, str] | None = None


@dataclass(frozen=True)
class DeviceExpect:
    """The devices (`driver/pool/device`) each request of the claim may have, in any order, and a text of the
    error that makes the scheduler give up on the claim (None: it does not fail)."""

    selected: Mapping[str, tuple[str, ...]] | None = None
    failure: str | None = None


@dataclass(frozen=True)
class UserExpect:
    """The user a token authenticates as; a field left out (None) is not checked."""

    username: str | None = None
    uid: str | None = None
    groups: tuple[str, ...] | None = None
    extra: Mapping[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class AuthenticationExpect:
    """The user the token authenticates as, or a text of why it is rejected."""

    user: UserExpect | None = None
    rejected: str | None = None


@dataclass(frozen=True)
class AuthorizationExpect:
    """The chain's decision, each authorizer's outcome (by name; a list: the names asked, in order) and a text of
    the error the authorizers return."""

    decision: str | None = None
    authorizers: Mapping[str, str] | tuple[str, ...] | None = None
    error: str | None = None


Expect = CRDExpect | AdmissionExpect | WebhookExpect | DeviceExpect | AuthenticationExpect | AuthorizationExpect


@dataclass(frozen=True)
class ClaimInput:
    """A device case's ResourceClaim (or ResourceClaimTemplate), and the feature gates the cluster sets."""

    claim: ObjectInput
    feature_gates: Mapping[str, bool] = field(default_factory=dict)


@dataclass(frozen=True)
class TokenInput:
    """An authentication case's token: a JWT (its signature is never checked) or its claims, and the moment it is
    presented (None: `exp` and `nbf` are not checked)."""

    token: str | Mapping[str, Any]
    now: datetime | None = None


@dataclass(frozen=True)
class ReviewInput:
    """An authorization case's SubjectAccessReview, or its spec."""

    review: Mapping[str, Any]


SurfaceInput = ClaimInput | TokenInput | ReviewInput


@dataclass(frozen=True)
class Case:
    """One request and the answer expected; `versions` empty means the suite's (or the newest). CRD, admission and
    webhook cases send an `object`; the other surfaces' cases send what `given` holds."""

    name: str
    index: int
    object: ObjectInput | None = None
    old: ObjectInput | None = None
    expect: Expect | None = None
    skip: str | None = None
    versions: tuple[str, ...] = ()
    namespace: str | None = None
    subresource: str | None = None
    field_validation: str = "Strict"  # CRDs: kubectl's --validate
    operation: str | None = None  # admission: default UPDATE with an old object, else CREATE
    user: str = ""
    groups: tuple[str, ...] = ()
    given: SurfaceInput | None = None  # devices, authentication and authorization cases

    @property
    def path(self) -> fe.Path:
        return fe.Path.new("cases").index(self.index)

    @property
    def sent(self) -> ObjectInput:
        """The object of a CRD, admission or webhook case (reading the suite made sure there is one)."""
        if self.object is None:
            raise ValueError(f"{self.path}: this case sends no object")
        return self.object


@dataclass(frozen=True)
class Suite:
    """One suite document: what it tests (`kind`), the files it loads, the objects given inline, and its cases."""

    where: Where
    kind: str  # CRD, ADMISSION, WEBHOOKS, DEVICES, AUTHENTICATION or AUTHORIZATION
    cases: tuple[Case, ...]
    versions: tuple[str, ...] = ()
    crds: tuple[Path, ...] = ()
    policies: tuple[Path, ...] = ()
    params: tuple[Path, ...] = ()
    rbac: tuple[Path, ...] = ()
    objects: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)  # inline params and Namespaces
    rbac_objects: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    files: tuple[Path, ...] = ()  # webhooks: configurations (and Namespaces, CRDs); devices: classes and slices
    configuration: ObjectInput | None = field(default=None, repr=False)  # authentication or authorization
    runtime_config: tuple[str, ...] = ()  # policies: alpha and beta API versions assumed switched on

    def case_id(self, case: Case) -> str:
        """`file::name`, what -k selects on and reports print."""
        return f"{self.where.file}::{case.name}"


@dataclass(frozen=True)
class Mismatch:
    """One way the answer differs from the expectation: the field, both sides as text, and a diff for objects."""

    field: str
    expected: str
    actual: str
    diff: tuple[str, ...] = ()
