"""Cases for CRDs: reading their expectations, sending each object through its CRD, checking and recording the answer.

An object goes through `kcel.k8s.crds.validate_object` exactly as `kcel validate` sends it: a create, an update
when the case has an old object, a `status` update with `subresource: status`, under the case's field
validation. The CRD is the one of the suite's `crds` that serves the object's apiVersion and kind.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.crds.crd import CRD
from kcel.k8s.crds.objects import ObjectResult, validate_object
from kcel.k8s.crds.validate import Catalog
from kcel.suites.compare import check_object, check_texts, quote
from kcel.suites.fields import Fields, SuiteError, Where, attempt, did_you_mean, kind_of, raise_every
from kcel.suites.model import Case, CRDExpect, Mismatch, ObjectInput, Suite

EXPECT_KEYS = ("valid", "errors", "reason", "warnings", "stored")
SHORTHANDS = {"valid": True, "invalid": False}
SERVER_FILLED = frozenset(("namespace", "resourceVersion", "uid", "creationTimestamp", "generation"))


def read_expect(value: Any, where: Where, path: fe.Path) -> CRDExpect:
    """`valid`, `invalid`, or a mapping of valid, errors (texts the message contains), reason, warnings, stored."""
    if isinstance(value, str):
        if value not in SHORTHANDS:
            raise SuiteError(
                where, path, f"must be valid, invalid or a mapping, not {value!r}{did_you_mean(value, SHORTHANDS)}"
            )
        return CRDExpect(SHORTHANDS[value])
    if not isinstance(value, Mapping):
        raise SuiteError(where, path, f"must be valid, invalid or a mapping, not {kind_of(value)}")
    fields = Fields(value, where, path)
    fields.known(EXPECT_KEYS)
    errors = fields.strings("errors")
    if errors is not None and (not errors or not all(errors)):
        raise fields.error("errors", "give at least one text the message contains (or valid: true)")
    reason = fields.string("reason", choices=("Invalid", "BadRequest"))
    stored = fields.mapping("stored")
    valid = fields.boolean("valid")
    if valid is None and not (errors or reason or stored):
        raise SuiteError(where, path, "say whether the object is valid: valid: true|false, errors or stored")
    if (errors or reason) and (valid or stored):
        raise fields.error("errors" if errors else "reason", "a valid object has no errors (valid: true or stored)")
    if valid is False and stored:
        raise fields.error("stored", "only a valid object is stored (valid: false)")
    valid = valid if valid is not None else bool(stored)
    return CRDExpect(valid, errors or (), reason, fields.strings("warnings"), stored.data if stored else None)


@dataclass(frozen=True)
class CRDTarget:
    """A CRD suite made ready to run: the CRD each case's object belongs to."""

    crds: Mapping[int, CRD]  # by case index

    def answer(self, case: Case, version: str) -> ObjectResult:
        """The API server's answer (raises ValueError on a request it cannot take)."""
        return validate_object(
            self.crds[case.index], case.sent.value, case.old.value if case.old else None,
            subresource=case.subresource, field_validation=case.field_validation,
            namespace=case.namespace or "default", strict_errors=case.sent.strict_errors, k8s_version=version,
        )  # fmt: skip

    def check(self, expect: CRDExpect, result: ObjectResult) -> list[Mismatch]:
        if expect.valid != (not result.message):
            return [Mismatch("valid", "valid" if expect.valid else "invalid", result.message or "valid")]
        mismatches = [
            Mismatch("errors", f"a message containing {quote(text)}", result.message)
            for text in expect.errors
            if text not in result.message
        ]
        if expect.reason is not None and expect.reason != result.reason:
            mismatches.append(Mismatch("reason", expect.reason, result.reason or "none"))
        mismatches += check_texts("warnings", expect.warnings, result.warnings, "a warning")
        return mismatches + check_object("stored", expect.stored, result.object)

    def record(self, case: Case, result: ObjectResult) -> Any:
        """The expectation this answer meets exactly, as it is written in a suite (`--update`)."""
        recorded: dict[str, Any] = {}
        if result.message:
            texts = [str(e) for e in result.errors]
            fits = texts and all(text in result.message for text in texts)
            recorded["errors"] = texts if fits else [result.message]
            if result.reason == "BadRequest":
                recorded["reason"] = result.reason
        else:
            recorded["valid"] = True
        if result.warnings:
            recorded["warnings"] = list(result.warnings)
        if not result.message and _changed(case.sent.value, result.object):
            del recorded["valid"]  # a stored object is a valid one
            recorded["stored"] = result.object
        return "valid" if recorded == {"valid": True} else recorded


def _changed(sent: Mapping[str, Any], stored: Any) -> bool:
    """Whether storing changed the object, beyond the metadata the API server fills in (namespace, resourceVersion
    and the like carried over from the old object): defaulting, pruning, a status update's reset spec."""
    if not isinstance(stored, Mapping):
        return False
    sent_meta, stored_meta = (_mapping(value.get("metadata")) for value in (sent, stored))
    kept = {k: v for k, v in stored_meta.items() if k in sent_meta or k not in SERVER_FILLED}
    rest = [{k: v for k, v in value.items() if k != "metadata"} for value in (sent, stored)]
    return rest[0] != rest[1] or kept != dict(sent_meta)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def prepare(suite: Suite, versions: tuple[str, ...]) -> CRDTarget:
    """Load the suite's CRDs and find each case's; raises SuiteError naming the field that cannot be used."""
    try:
        catalog = Catalog.load(suite.crds)
    except FileNotFoundError as err:
        raise SuiteError(suite.where, fe.Path.new("crds"), str(err)) from None
    raise_every([SuiteError(suite.where, fe.Path.new("crds"), problem) for problem in catalog.problems])
    if not catalog.crds:
        raise SuiteError(suite.where, fe.Path.new("crds"), "no CustomResourceDefinition in these files")
    found: dict[int, CRD] = {}
    errors: list[SuiteError] = []
    for case in suite.cases:
        if case.skip:
            continue  # a skipped case may be waiting for a CRD version that is not there yet
        crd = attempt(errors, _crd_of, case.sent, case, catalog, suite.where)
        if case.old is not None:
            attempt(errors, _crd_of, case.old, case, catalog, suite.where)
        if crd is not None:
            found[case.index] = crd
    raise_every(errors)
    return CRDTarget(found)


def _crd_of(sent: ObjectInput, case: Case, catalog: Catalog, where: Where) -> CRD:
    path = sent.path if sent.path.elements else case.path
    api_version, kind = str(sent.value["apiVersion"]), str(sent.value["kind"])
    crd = catalog.find(api_version, kind)
    if crd is None:
        raise SuiteError(where, path, f"no CRD in crds serves apiVersion {api_version}, kind {kind}")
    version = api_version.rpartition("/")[2]
    if not any(v.name == version and v.served for v in crd.versions):
        raise SuiteError(where, path, f"{crd.name} serves no version {version!r}")
    return crd
