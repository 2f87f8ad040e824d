"""Cases for admission policies: reading their expectations, deciding each request, checking and recording the answer.

A case's objects become an AdmissionReview request (`kcel.k8s.admission.request_from_objects`) from the case's
user, groups (with `system:authenticated`, as for any authenticated user), namespace, operation and
subresource; the suite's ValidatingAdmissionPolicies and bindings decide it with its params, Namespaces
and, for `authorizer`, its RBAC objects. Policies are compiled once per Kubernetes version the suite runs at.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from kcel.k8s import field as fe
from kcel.k8s.admission.decision import Decision
from kcel.k8s.admission.identity import DEFAULT_USER, authenticated_groups
from kcel.k8s.admission.loading import load
from kcel.k8s.admission.policyset import PolicySet
from kcel.k8s.admission.request import request_from_objects
from kcel.k8s.authorization.rbac import RBACAuthorizer
from kcel.k8s.manifests.files import manifest_files
from kcel.suites.compare import check_map, check_object, check_texts, quote
from kcel.suites.fields import Fields, SuiteError, Where, did_you_mean, kind_of, raise_every
from kcel.suites.model import AdmissionExpect, Case, Mismatch, Suite

EXPECT_KEYS = ("allowed", "message", "reason", "code", "warnings", "auditAnnotations", "patched", "patch")
SHORTHANDS = {"allowed": True, "denied": False}


def admission_request(case: Case, crds: Iterable[Any] = ()) -> dict[str, Any]:
    """The AdmissionReview request a case sends (also to webhooks): its objects, operation, user, groups (with
    `system:authenticated`), namespace and subresource; `crds` (`Resources.crds`) name custom resources' plurals."""
    return request_from_objects(
        case.sent.value, case.old.value if case.old else None, operation=case.operation,
        user=case.user or DEFAULT_USER, groups=authenticated_groups(case.groups), namespace=case.namespace,
        subresource=case.subresource or "", crds=crds,
    )  # fmt: skip


def read_expect(value: Any, where: Where, path: fe.Path) -> AdmissionExpect:
    """`allowed`, `denied`, or a mapping: allowed, message (a text of it), reason, code, warnings, auditAnnotations."""
    if isinstance(value, str):
        if value not in SHORTHANDS:
            raise SuiteError(
                where, path, f"must be allowed, denied or a mapping, not {value!r}{did_you_mean(value, SHORTHANDS)}"
            )
        return AdmissionExpect(SHORTHANDS[value])
    if not isinstance(value, Mapping):
        raise SuiteError(where, path, f"must be allowed, denied or a mapping, not {kind_of(value)}")
    fields = Fields(value, where, path)
    fields.known(EXPECT_KEYS)
    allowed = fields.boolean("allowed")
    denial = {key: fields.value(key) for key in ("message", "reason", "code") if fields.has(key)}
    message, reason, code = fields.string("message"), fields.string("reason"), fields.integer("code")
    patched, patch = _patched(fields), _patch(fields)
    if allowed is None and not denial and patched is None and patch is None:
        raise SuiteError(
            where, path, "say whether the request is allowed: allowed: true|false, message/reason, or patched/patch"
        )
    if allowed and denial:
        raise fields.error(next(iter(denial)), "an allowed request has no denial message, reason or code")
    return AdmissionExpect(
        allowed if allowed is not None else not denial, message, reason, code, fields.strings("warnings"),
        fields.string_map("auditAnnotations"), patched, patch,
    )  # fmt: skip


def _patched(fields: Fields) -> Mapping[str, Any] | None:
    value = fields.value("patched") if fields.has("patched") else None
    if value is not None and not isinstance(value, Mapping):
        raise fields.error("patched", f"must be the whole mutated object, not {kind_of(value)}")
    return value


def _patch(fields: Fields) -> tuple[Mapping[str, Any], ...] | None:
    value = fields.value("patch") if fields.has("patch") else None
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(op, Mapping) for op in value):
        raise fields.error("patch", "must be a list of JSON Patch operations ([]: the object is not mutated)")
    return tuple(value)


@dataclass(frozen=True)
class AdmissionTarget:
    """An admission suite made ready to run: its policies compiled for each version, and its authorizer."""

    policies: Mapping[str, PolicySet]  # by Kubernetes version
    authorizer: RBACAuthorizer | None

    def answer(self, case: Case, version: str) -> Decision:
        """The decision on the case's request (raises ValueError on a request that cannot be built)."""
        policies = self.policies[version]
        return policies.admit(admission_request(case, policies.resources.crds), authorizer=self.authorizer)

    def check(self, expect: AdmissionExpect, decision: Decision) -> list[Mismatch]:
        if expect.allowed != decision.allowed:
            return [Mismatch("allowed", "allowed" if expect.allowed else "denied", _verdict(decision))]
        mismatches = []
        if expect.message is not None and expect.message not in decision.message:
            mismatches.append(Mismatch("message", f"a message containing {quote(expect.message)}", decision.message))
        if expect.reason is not None and expect.reason != decision.reason:
            mismatches.append(Mismatch("reason", expect.reason, decision.reason or "none"))
        if expect.code is not None and expect.code != decision.code:
            mismatches.append(Mismatch("code", str(expect.code), str(decision.code)))
        mismatches += check_texts("warnings", expect.warnings, decision.warnings, "a warning")
        mismatches += _check_mutation(expect, decision)
        return mismatches + check_map("auditAnnotations", expect.audit_annotations, decision.audit_annotations)

    def record(self, case: Case, decision: Decision) -> Any:
        """The expectation this decision meets exactly, as it is written in a suite (`--update`)."""
        recorded: dict[str, Any] = {"allowed": decision.allowed}
        if not decision.allowed:
            recorded.update(reason=decision.reason, message=decision.message)
        if decision.warnings:
            recorded["warnings"] = list(decision.warnings)
        if decision.audit_annotations:
            recorded["auditAnnotations"] = dict(decision.audit_annotations)
        if decision.patched is not None:
            recorded["patched"] = dict(decision.patched)
        return "allowed" if recorded == {"allowed": True} else recorded


def _check_mutation(expect: AdmissionExpect, decision: Decision) -> list[Mismatch]:
    """The mutated object must be the expected one exactly; the differences are shown as `stored`'s are, a unified
    diff of the two objects' YAML (`-` expected, `+` actual), not a JSON Patch whose direction readers must guess."""
    mismatches = []
    if expect.patched is not None:
        if decision.patched is None:
            mismatches.append(Mismatch("patched", "a mutated object", "the object was not mutated"))
        else:
            mismatches += check_object("patched", dict(expect.patched), dict(decision.patched))
    if expect.patch is not None and [dict(op) for op in expect.patch] != list(decision.patch):
        mismatches.append(Mismatch("patch", json.dumps(list(expect.patch)), json.dumps(list(decision.patch))))
    return mismatches


def _verdict(decision: Decision) -> str:
    return "allowed" if decision.allowed else f"denied ({decision.code} {decision.reason}): {decision.message}"


def prepare(suite: Suite, versions: tuple[str, ...]) -> AdmissionTarget:
    """Load and compile the suite's policies for each version; raises SuiteError naming the field at fault."""
    loaded = load(suite.policies)
    _raise_all(suite.where, "policies", loaded.problems)
    if not loaded.policies and not loaded.mutating_policies:
        message = "no ValidatingAdmissionPolicy or MutatingAdmissionPolicy in these files"
        raise SuiteError(suite.where, fe.Path.new("policies"), message)
    known = len(loaded.problems)
    load(suite.params, loaded)
    _raise_all(suite.where, "params", loaded.problems[known:])
    loaded.objects += [dict(obj) for obj in suite.objects]
    compiled = {}
    for version in versions:
        policies = PolicySet(loaded, version, runtime_config=suite.runtime_config)
        at = f" (Kubernetes {version})" if len(versions) > 1 else ""
        _raise_all(suite.where, "policies", [problem + at for problem in policies.problems])
        compiled[version] = policies
    return AdmissionTarget(compiled, rbac_authorizer(suite))


def _raise_all(where: Where, key: str, problems: list[str]) -> None:
    """Every problem of the files under `key`, each one shown."""
    raise_every([SuiteError(where, fe.Path.new(key), problem) for problem in problems])


def rbac_authorizer(suite: Suite) -> RBACAuthorizer | None:
    """The authorizer the suite's `rbac` objects make (None: no rbac given); SuiteError on objects it cannot read."""
    if not suite.rbac and not suite.rbac_objects:
        return None
    texts = [path.read_text(encoding="utf-8") for path in manifest_files(suite.rbac)]
    if suite.rbac_objects:
        texts.append(yaml.safe_dump_all([dict(obj) for obj in suite.rbac_objects]))
    try:
        return RBACAuthorizer.from_yaml(*texts)
    except (ValueError, TypeError, yaml.YAMLError, OSError) as err:
        raise SuiteError(suite.where, fe.Path.new("rbac"), str(err)) from None
