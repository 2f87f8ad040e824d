"""`python -m conformance crds [DIR]`: real CRDs and their object cases (the shared `crds/` corpus).

Each CRD version gives one outcome: its rules compile and type-check and `validate_crd` reports nothing, as
the API server accepted it. Each case of a project's `cases.json` gives one outcome: `validate_object` takes the
object through the steps of the API server the case was recorded on (`kubernetesVersion`, default the newest),
with the request's field validation (`fieldValidation`, default Warn, the API server's when a client sends none):
decoding, pruning, defaulting, ObjectMeta, OpenAPI schema, list types, CEL. Its message must contain every
expected text; a case with `stored` must also leave that object, compared as upstream's harness compares it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.outcome import Outcome, SkipList
from kcel.k8s.crds.crd import CRD, count_rules, load_crds, validate_crd
from kcel.k8s.crds.objects import ObjectResult, validate_object
from kcel.k8s.schemas.correlation import deep_equal


def run_directory(directory: Path, skips: SkipList) -> dict[str, list[Outcome]]:
    """Outcomes per project folder (those with an `index.json`), in name order."""
    return {
        project.name: run_project(project, skips)
        for project in sorted(directory.iterdir())
        if (project / "index.json").is_file()
    }


def run_project(project: Path, skips: SkipList) -> list[Outcome]:
    index = json.loads((project / "index.json").read_text(encoding="utf-8"))
    files = _Files(project)
    outcomes = [o for entry in index["crds"] for o in _version_outcomes(project.name, entry, files, skips)]
    cases = project / "cases.json"
    if cases.is_file():
        for case in json.loads(cases.read_text(encoding="utf-8")):
            outcomes.append(_case_outcome(f"{project.name}/{case['id']}", case, files, skips))
    return outcomes


class _Files:
    """CRD files of a project, each read once (validators compiled for one case are reused by the next)."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self.loaded: dict[str, list[CRD]] = {}

    def crds(self, file: str) -> list[CRD]:
        if file not in self.loaded:
            self.loaded[file] = load_crds(self.project / file)
        return self.loaded[file]

    def crd(self, file: str, name: str | None = None, group: str | None = None) -> CRD:
        for crd in self.crds(file):
            if (name is None or crd.name == name) and (group is None or crd.group == group):
                return crd
        raise LookupError(f"{file}: no CRD {name or group}")


def _version_outcomes(project: str, entry: dict[str, Any], files: _Files, skips: SkipList) -> list[Outcome]:
    ids = [f"{project}/{entry['name']}/{version['name']}" for version in entry["versions"]]
    try:
        crd = files.crd(entry["file"], entry["name"])
        errors = validate_crd(crd)
    except Exception as err:  # a load error or a kcel crash fails every version of the CRD
        return [_outcome(case_id, [f"{type(err).__name__}: {err}"], skips) for case_id in ids]
    outcomes = []
    for i, (case_id, expected) in enumerate(zip(ids, entry["versions"], strict=True)):
        rules = count_rules(crd.schema_of(crd.version(expected["name"])))
        problems = [] if rules == expected["rules"] else [f"read {rules} rules, index.json has {expected['rules']}"]
        problems += [str(e) for e in errors if _about_version(str(e.field), i)]
        outcomes.append(_outcome(case_id, problems, skips))
    return outcomes


def _about_version(path: str, index: int) -> bool:
    """Errors under `spec.versions[j]` concern version j; those under `spec.validation` concern all."""
    return not path.startswith("spec.versions[") or path.startswith(f"spec.versions[{index}]")


def _outcome(case_id: str, problems: list[str], skips: SkipList) -> Outcome:
    reason = skips.reason(case_id)
    if reason is not None:
        return Outcome(case_id, "skipped", reason)
    return Outcome(case_id, "failed", "; ".join(problems)) if problems else Outcome(case_id, "passed")


def _case_outcome(case_id: str, case: dict[str, Any], files: _Files, skips: SkipList) -> Outcome:
    reason = skips.reason(case_id)
    if reason is not None:
        return Outcome(case_id, "skipped", reason)
    try:
        result = _run_case(case, files)
    except Exception as err:  # a kcel crash is a failure of this case, not of the run
        return Outcome(case_id, "failed", f"{type(err).__name__}: {err}")
    problems = _problems(case, result.message)
    if "stored" in case and not result.message:
        stored, expected = _comparable(result.object, result.object), _comparable(case["stored"], result.object)
        if not deep_equal(stored, expected):
            problems.append(f"stored {json.dumps(stored, sort_keys=True)}, expected "
                            f"{json.dumps(expected, sort_keys=True)}")  # fmt: skip
    note = f" (case note: {case['uncertain']})" if case.get("uncertain") else ""
    return Outcome(case_id, "failed", "; ".join(problems) + note) if problems else Outcome(case_id, "passed")


def _problems(case: dict[str, Any], message: str) -> list[str]:
    expect = case["expect"]
    if expect == "valid":
        return [f"expected valid, got: {message}"] if message else []
    if not message:
        return [f"expected {expect['errors'] or 'a rejection'}, got no errors"]
    missing = [text for text in expect["errors"] if text not in message]
    return [f"expected {missing} in: {message}"] if missing else []


# Metadata the API server sets when it persists an object; the corpus README: ignored on both sides.
SERVER_SET = frozenset({
    "uid", "generation", "creationTimestamp", "resourceVersion", "managedFields", "deletionGracePeriodSeconds",
    "deletionTimestamp", "selfLink", "generateName",
})  # fmt: skip


def _comparable(obj: Any, persisted: Any) -> Any:
    """An object as upstream's harness compares stored objects: the name and namespace taken from the persisted
    object, the metadata the server sets left out."""
    if not isinstance(obj, dict):
        return obj
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    kept = {k: v for k, v in metadata.items() if k not in SERVER_SET and k not in ("name", "namespace")}
    persisted_meta = persisted.get("metadata") if isinstance(persisted, dict) else None
    if isinstance(persisted_meta, dict):
        kept |= {k: persisted_meta[k] for k in ("name", "namespace") if k in persisted_meta}
    return {**obj, "metadata": kept}


def _run_case(case: dict[str, Any], files: _Files) -> ObjectResult:
    """The API server's answer to the case's request, as kcel gives it."""
    obj = case["object"]
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    crd = files.crd(case["crd"], group=group or None)
    if "apiVersion" not in obj:
        obj = {**obj, "apiVersion": f"{crd.group}/{case['version']}"}
    old = case.get("oldObject") if case["operation"] == "UPDATE" else None
    return validate_object(
        crd, obj, old, subresource=case.get("subresource"), field_validation=case.get("fieldValidation", "Warn"),
        k8s_version=case.get("kubernetesVersion"),
    )  # fmt: skip
