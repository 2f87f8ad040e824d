"""`kcel audit`: a snapshot of a few hundred objects of built-in and custom kinds, new policies (one with params, one
that warns, a MutatingAdmissionPolicy) and a tightened CRD version; every finding checked against what the data
says it must be."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.cli import main
from kcel.k8s.crds.crd import load_crds
from kcel.k8s.crds.objects import validate_object

HERE = Path(__file__).parent
LIMITS = {"team-a": 5, "team-b": 3}
DEPLOYMENTS, WIDGETS, SERVICES = 160, 120, 20

POLICIES = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replica-limit}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations:
    - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
      messageExpression: "'at most ' + params.data.maxReplicas + ' replicas'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replica-limit}
spec:
  policyName: replica-limit
  paramRef: {name: limits, parameterNotFoundAction: Deny}
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: team-label}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations:
    - expression: "'team' in object.metadata.?labels.orValue({})"
      message: every Deployment names its team
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: team-label}
spec: {policyName: team-label, validationActions: [Warn]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-single-replica}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations:
    - expression: "object.spec.replicas != 1"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-single-replica}
spec: {policyName: no-single-replica, validationActions: [Audit]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: audited-label}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  matchConditions:
    - name: not-yet
      expression: "!('audited' in object.metadata.?labels.orValue({}))"
  failurePolicy: Fail
  reinvocationPolicy: Never
  mutations:
    - patchType: ApplyConfiguration
      applyConfiguration:
        expression: 'Object{metadata: Object.metadata{labels: {"audited": "true"}}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: audited-label}
spec: {policyName: audited-label}
"""


def _widget_crd(new: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer"},
            "mode": {"type": "string", "enum": ["Safe"] if new else ["Safe", "Fast"]},
            "name": {"type": "string", "maxLength": 12 if new else 20},
        },
    }
    if new:
        spec["x-kubernetes-validations"] = [{"rule": "self.replicas <= 10", "message": "at most 10"}]
    else:
        spec["properties"]["legacy"] = {"type": "string"}
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}
    versions = [{"name": "v1", "served": True, "storage": True, "schema": schema}]
    if not new:
        versions.append({"name": "v1alpha1", "served": True, "storage": False, "schema": schema})
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "versions": versions,
                     "names": {"kind": "Widget", "plural": "widgets", "singular": "widget",
                               "listKind": "WidgetList"}}}  # fmt: skip


def _deployment(i: int) -> dict[str, Any]:
    labels = {"app": f"d{i}"} | ({"team": "a"} if i % 3 else {}) | ({"audited": "true"} if i % 4 == 0 else {})
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": f"d{i}", "namespace": _namespace(i), "labels": labels, "uid": f"uid-d{i}",
                         "resourceVersion": str(1000 + i), "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": i % 8, "selector": {"matchLabels": {"app": f"d{i}"}},
                     "template": {"metadata": {"labels": {"app": f"d{i}"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}  # fmt: skip


def _widget(i: int) -> dict[str, Any]:
    spec = {"replicas": i % 15, "mode": "Fast" if i % 5 == 0 else "Safe", "name": "w" * (i % 25)}
    if i % 7 == 0:
        spec["legacy"] = "x"
    version = "v1alpha1" if i % 30 == 0 else "v1"
    return {"apiVersion": f"example.com/{version}", "kind": "Widget",
            "metadata": {"name": f"w{i}", "namespace": _namespace(i), "uid": f"uid-w{i}", "resourceVersion": "7"},
            "spec": spec}  # fmt: skip


def _namespace(i: int) -> str:
    return "team-a" if i % 2 == 0 else "team-b"


def _snapshot() -> list[dict[str, Any]]:
    """`kubectl get -A -o yaml` of each kind: Lists."""
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {"env": name}}}
                  for name in LIMITS]  # fmt: skip
    limits = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits", "namespace": name},
               "data": {"maxReplicas": str(limit)}} for name, limit in LIMITS.items()]  # fmt: skip
    services = [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"s{i}", "namespace": _namespace(i)},
                 "spec": {"ports": [{"port": 80}]}} for i in range(SERVICES)]  # fmt: skip
    lists = [namespaces + limits, [_deployment(i) for i in range(DEPLOYMENTS)], [_widget(i) for i in range(WIDGETS)],
             services, [_widget_crd(new=False)]]  # fmt: skip
    return [
        {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items} for items in lists
    ]


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    (tmp_path / "snapshot.yaml").write_text(yaml.safe_dump_all(_snapshot()), encoding="utf-8")
    (tmp_path / "policies.yaml").write_text(POLICIES, encoding="utf-8")
    (tmp_path / "widget-crd-v2.yaml").write_text(yaml.safe_dump(_widget_crd(new=True)), encoding="utf-8")
    return tmp_path


def _audit(cluster: Path, capsys: pytest.CaptureFixture[str], *more: str, output: str = "json") -> tuple[int, Any]:
    code = main(["audit", "--policy", str(cluster / "policies.yaml"), "--crd", str(cluster / "widget-crd-v2.yaml"),
                 "-o", output, "-j", "2", *more])  # fmt: skip
    out = capsys.readouterr().out
    return code, json.loads(out) if output != "text" else out


def _counts(report: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, int]]:
    return {(r["policy"], r["rule"], r["operation"]): r["counts"] for r in report["results"]}


def test_policies_and_a_new_crd_against_stored_objects(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _audit(cluster, capsys, str(cluster / "snapshot.yaml"))
    assert code == 1
    assert report["objects"] == 4 + DEPLOYMENTS + WIDGETS + SERVICES + 1 and report["problems"] == []
    counts = _counts(report)
    over = sum(i % 8 > LIMITS[_namespace(i)] for i in range(DEPLOYMENTS))
    unlabelled = sum(i % 3 == 0 for i in range(DEPLOYMENTS))
    not_audited = sum(i % 4 != 0 for i in range(DEPLOYMENTS))
    for operation in ("UPDATE", "CREATE"):
        assert counts[("ValidatingAdmissionPolicy/replica-limit", "replica-limit", operation)] == {
            "fail": over,
            "pass": DEPLOYMENTS - over,
        }
        assert counts[("ValidatingAdmissionPolicy/team-label", "team-label", operation)] == {
            "warn": unlabelled,
            "pass": DEPLOYMENTS - unlabelled,
        }
    assert counts[("MutatingAdmissionPolicy/audited-label", "audited-label", "CREATE")] == {"warn": not_audited}
    assert not any(key[0].startswith("MutatingAdmissionPolicy") and key[2] == "UPDATE" for key in counts)
    example = next(r for r in report["results"] if r["policy"] == "ValidatingAdmissionPolicy/replica-limit")
    first = example["examples"][0]
    assert first["message"] == f"at most {LIMITS[first['object']['namespace']]} replicas"

    unserved = [i for i in range(WIDGETS) if i % 30 == 0]
    served = [i for i in range(WIDGETS) if i % 30]
    invalid = [i for i in served if i % 5 == 0 or i % 25 > 12 or i % 15 > 10]
    crd = "CustomResourceDefinition/widgets.example.com"
    assert counts[(crd, "version", "UPDATE")] == {"error": len(unserved)}
    assert counts[(crd, "create", "CREATE")] == {"fail": len(invalid), "pass": len(served) - len(invalid)}
    assert counts[(crd, "update", "UPDATE")] == {"pass": len(served)}  # ratcheting: unchanged values pass
    assert counts[(crd, "prune", "UPDATE")] == {"warn": sum(i % 7 == 0 for i in served)}
    (prune,) = [r for r in report["results"] if r["rule"] == "prune"]
    assert {e["message"] for e in prune["examples"]} == {"would prune spec.legacy"}

    (changes,) = report["crdChanges"]
    found = {(c["version"], c["path"], c["what"], c["breaking"]) for c in changes["changes"]}
    assert found == {
        ("v1alpha1", "", "version", True), ("v1", "spec.mode", "enum", True), ("v1", "spec.legacy", "removed", True),
        ("v1", "spec.name", "bound", True), ("v1", "spec", "rule", True),
    }  # fmt: skip


def test_policy_reports_validate_against_their_crds(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, reports = _audit(cluster, capsys, str(cluster / "snapshot.yaml"), output="policyreport")
    crds = {crd.kind: crd for crd in load_crds(HERE / "policyreport-crds.yaml")}
    kinds = Counter(report["kind"] for report in reports["items"])
    assert kinds == {"PolicyReport": 2}  # team-a and team-b; no cluster-scoped object was checked
    results, audited = 0, []
    for report in reports["items"]:
        checked = validate_object(crds[report["kind"]], report)
        assert checked.errors == [], checked.message
        namespace = report["metadata"]["namespace"]
        assert all(r["resources"][0]["namespace"] == namespace for r in report["results"])
        assert report["summary"]["fail"] == sum(r["result"] == "fail" for r in report["results"])
        audited += [r for r in report["results"] if r["properties"].get("validationActions") == "Audit"]
        results += len(report["results"])
    assert audited and {r["result"] for r in audited} == {"fail"}  # audit mode reports a fail
    _, summary = _audit(cluster, capsys, str(cluster / "snapshot.yaml"))
    not_pass = sum(n for r in summary["results"] for outcome, n in r["counts"].items() if outcome != "pass")
    assert results == not_pass


def test_json_snapshots_and_standard_input_read_the_same(
    cluster: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, from_yaml = _audit(cluster, capsys, str(cluster / "snapshot.yaml"))
    folder = cluster / "json"
    folder.mkdir()
    for index, listed in enumerate(_snapshot()):  # kubectl's layout: one List per file, indented by 4
        (folder / f"{index}.json").write_text(json.dumps(listed, indent=4), encoding="utf-8")
    _, from_json = _audit(cluster, capsys, str(folder))
    monkeypatch.setattr("sys.stdin", io.StringIO((cluster / "snapshot.yaml").read_text(encoding="utf-8")))
    _, from_stdin = _audit(cluster, capsys, "-")
    assert _counts(from_json) == _counts(from_yaml) == _counts(from_stdin)


def test_broken_objects_are_reported_where_they_are(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    snapshot = cluster / "broken.yaml"
    good = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [_deployment(1), _deployment(2)]})
    snapshot.write_text(good.replace("  kind: Deployment\n", "  kind: [Deployment\n", 1), encoding="utf-8")
    code, report = _audit(cluster, capsys, str(snapshot))
    assert code == 1
    (problem,) = report["problems"]
    assert problem.startswith(f"{snapshot}: document 0: items[0]:") and "invalid YAML" in problem
    assert report["objects"] == 1  # the other item was read and checked


def test_text_output_names_counts_and_examples(cluster: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _audit(cluster, capsys, str(cluster / "snapshot.yaml"), output="text")
    assert code == 1
    assert "CustomResourceDefinition widgets.example.com: changes from the installed one" in text
    assert '  breaking  v1: spec.mode: enum no longer allows "Fast"' in text
    assert "ValidatingAdmissionPolicy/replica-limit (binding replica-limit) CREATE: " in text
    assert "  fail: Deployment team-a/d6 (" in text


def test_nothing_to_audit_with_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.yaml").write_text("apiVersion: v1\nkind: List\nitems: []\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(["audit"])
    assert exited.value.code == 2
    assert main(["audit", str(tmp_path / "s.yaml")]) == 2
    assert "give --policy or --crd" in capsys.readouterr().err
