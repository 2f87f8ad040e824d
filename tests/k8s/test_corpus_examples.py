"""Every example object the CRD projects of ../shared/crds ship as valid passes the whole pipeline.

The examples are what users apply; a false rejection here (a decoding, pruning, defaulting, schema or rule
difference from the API server) would be the most visible kind of bug, so each valid case is checked on its
own, also as YAML text through `kcel validate`'s reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.k8s.crds.crd import CRD, load_crds
from kcel.k8s.crds.objects import validate_object
from kcel.k8s.manifests.decoding import decode_documents
from tests.conftest import SHARED

CORPUS = SHARED / "crds"


def _valid_cases() -> list[Any]:
    if not CORPUS.is_dir():
        return []
    return [
        pytest.param(project, case, id=f"{project.name}/{case['id']}")
        for project in sorted(CORPUS.iterdir())
        if (project / "cases.json").is_file()
        for case in json.loads((project / "cases.json").read_text(encoding="utf-8"))
        if case["expect"] == "valid"
    ]


CASES = _valid_cases()
_CRDS: dict[Path, list[CRD]] = {}


def _crd(project: Path, case: dict[str, Any]) -> CRD:
    path = project / case["crd"]
    if path not in _CRDS:
        _CRDS[path] = load_crds(path)
    group = case["object"]["apiVersion"].rpartition("/")[0]
    return next(crd for crd in _CRDS[path] if crd.group == group)


@pytest.mark.skipif(not CASES, reason=f"no valid example objects found under {CORPUS} (../shared is absent)")
@pytest.mark.parametrize(("project", "case"), CASES or [pytest.param(None, None, id="-")])
def test_valid_examples_validate_cleanly(project: Path, case: dict[str, Any]) -> None:
    old = case.get("oldObject") if case["operation"] == "UPDATE" else None
    crd = _crd(project, case)
    result = validate_object(crd, case["object"], old, subresource=case.get("subresource"))
    assert (result.message, result.warnings) == ("", [])
    (document,) = decode_documents(yaml.safe_dump(case["object"]), "example.yaml")  # as a user's manifest
    assert validate_object(crd, document.value, old, strict_errors=document.strict_errors).message == ""
