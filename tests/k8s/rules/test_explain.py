"""Cost explanations: each suggested bound is checked against the API server's own verdict on the CRD."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kcel.cli import main
from kcel.k8s.crds.crd import CRD, check_crd, load_crds, validate_crd
from kcel.k8s.rules.explain import explain

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
RULE = "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget"


def crd_with(spec_properties: dict[str, Any], rule: str, rule_on: str = "spec") -> CRD:
    """A CRD whose `spec` has the given properties and one rule (on `spec`, or on `spec.<rule_on>` items)."""
    spec: dict[str, Any] = {"type": "object", "properties": spec_properties}
    if rule_on == "spec":
        spec["x-kubernetes-validations"] = [{"rule": rule}]
    else:
        spec["properties"][rule_on]["items"]["x-kubernetes-validations"] = [{"rule": rule}]
    doc = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Thing", "plural": "things"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]},
    }  # fmt: skip
    (crd,) = load_crds(json.dumps(doc))
    return crd


def hosts(max_items: int | None, max_length: int = 253) -> dict[str, Any]:
    items = {"type": "array", "items": {"type": "string", "maxLength": max_length}}
    return {"hosts": items | ({"maxItems": max_items} if max_items is not None else {})}


HOSTS_RULE = "self.hosts.all(h, h.matches('^[a-z0-9.-]+$'))"


def rejected(crd: CRD) -> bool:
    return any(RULE in str(e) for e in validate_crd(crd))


def test_the_suggested_bound_is_the_largest_the_api_server_accepts() -> None:
    check = check_crd(crd_with(hosts(None), HOSTS_RULE))
    (cost,) = check.costs
    explanation = explain(cost)
    by_location = {b.location: b for b in explanation.bounds}
    suggestion = by_location["spec.hosts"].suggestion
    assert suggestion is not None and by_location["spec.hosts"].declared is None
    assert not rejected(crd_with(hosts(suggestion), HOSTS_RULE))
    assert rejected(crd_with(hosts(suggestion + 1), HOSTS_RULE))
    length = by_location["spec.hosts[*]"].suggestion  # a million one-character hosts would also do
    assert length is not None and length < 253
    assert not rejected(crd_with(hosts(None, length), HOSTS_RULE))
    assert rejected(crd_with(hosts(None, length + 1), HOSTS_RULE))


def test_lists_above_the_rule_multiply_its_cost() -> None:
    stages = {"stages": {"type": "array", "items": {"type": "object", "properties": {
        "command": {"type": "string", "maxLength": 64}}}}}  # fmt: skip
    crd = crd_with(stages, "self.command.matches('^[a-z ]+$')", rule_on="stages")
    (cost,) = check_crd(crd).costs
    assert cost.cardinality is None and cost.location == "spec.stages[*]"
    (bound,) = [b for b in explain(cost).bounds if b.multiplier]
    assert bound.location == "spec.stages" and bound.keyword == "maxItems" and bound.suggestion is not None
    stages["stages"]["maxItems"] = bound.suggestion
    assert not rejected(crd_with(stages, "self.command.matches('^[a-z ]+$')", rule_on="stages"))
    stages["stages"]["maxItems"] = bound.suggestion + 1
    assert rejected(crd_with(stages, "self.command.matches('^[a-z ]+$')", rule_on="stages"))


def test_a_common_bound_when_no_single_one_suffices() -> None:
    def nested(bound: int | None) -> dict[str, Any]:
        extra = {"maxItems": bound} if bound is not None else {}
        text = {"type": "string"} | ({"maxLength": bound} if bound is not None else {})
        return {"a": {"type": "array", "items": text} | extra, "b": {"type": "array", "items": text} | extra}

    rule = "self.a.all(x, self.b.all(y, x.contains(y)))"
    (cost,) = check_crd(crd_with(nested(None), rule)).costs
    explanation = explain(cost)
    assert all(b.suggestion is None for b in explanation.bounds)
    together = explanation.together
    assert together is not None and "setting all of them to" in explanation.lines()[-1]
    assert not rejected(crd_with(nested(together), rule))
    assert rejected(crd_with(nested(together + 1), rule))


def test_check_explains_the_readme_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(EXAMPLES / "expensive-crd.yaml")]) == 1
    out = capsys.readouterr().out
    assert "routes.example.com: rejected (1 rule)" in out
    assert "spec.hostnames (no maxItems: up to 1,048,575 items fit in a request)" in out
    assert "maxItems: 5,753 or less brings it under the limit" in out
    assert main(["check", str(EXAMPLES / "expensive-crd-fixed.yaml"), "-o", "json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    (cost,) = report["costs"]
    assert report["valid"] and cost["cost"] == cost["estimated"] and 0 < cost["share"] < 100
    assert report["totals"][0]["cost"] == cost["cost"]


def test_check_walks_directories_and_names_unreadable_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fixed.yaml").write_text((EXAMPLES / "expensive-crd-fixed.yaml").read_text())
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "broken.yaml").write_text("kind: [unclosed\n")
    assert main(["check", str(tmp_path)]) == 1  # a file that cannot be read makes the check fail
    captured = capsys.readouterr()
    assert "routes.example.com: accepted (1 rule)" in captured.out
    problem, summary = captured.err.splitlines()
    assert problem.startswith("error: ") and "broken.yaml" in problem
    assert summary == "1 CRD, 1 rule: 0 rejected"
    assert main(["check", str(tmp_path / "fixed.yaml")]) == 0
    assert main(["check", str(tmp_path / "missing.yaml")]) == 2
