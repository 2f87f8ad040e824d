"""`kcel check` and `kcel validate` on kustomize trees: patched objects checked, findings on the patch's lines, patch
files never read as objects, and what was not applied counted."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kcel.cli import main
from tests.conftest import sarif_results

WEBHOOKS = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: w
webhooks:
- name: a.example.com
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    url: https://example.com/
  matchConditions:
  - name: one
    expression: "true"
"""
BAD_CONDITION = """- op: add
  path: /webhooks/0/matchConditions/-
  value:
    name: two
    expression: "object.metadata.name == "
"""
KUSTOMIZATION = """resources: [w.yaml]
patches:
- path: p.yaml
  target: {kind: ValidatingWebhookConfiguration}
- path: gone.yaml
"""
GONE = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: nothing}\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in {"w.yaml": WEBHOOKS, "p.yaml": BAD_CONDITION, "kustomization.yaml": KUSTOMIZATION,
                       "gone.yaml": GONE}.items():  # fmt: skip
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_patched_webhook_is_checked_and_its_error_shown_at_the_patch(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "."]) == 1
    out, err = capsys.readouterr()
    assert "w.yaml: document 0: ValidatingWebhookConfiguration w: rejected (2 expressions)" in out
    assert "  at p.yaml:5: webhooks[0].matchConditions[1].expression" in out.splitlines()
    assert "skipped: gone.yaml: document 0: a patch of Deployment nothing, not applied: no such object among the " \
           "resources of kustomization.yaml" in err  # fmt: skip
    assert "skipped: kustomization.yaml: a kustomization: its resources and patches are read" in err
    assert err.splitlines()[-1] == ("0 CRDs, 0 rules, 1 other object: 1 rejected, 2 skipped, 1 patch applied, "
                                    "1 patch not applied (no target in the tree)")  # fmt: skip
    assert main(["check", "-o", "github", "."]) == 1
    (annotation,) = capsys.readouterr().out.splitlines()
    assert annotation.startswith("::error file=p.yaml,line=5,title=kcel::webhooks[0].matchConditions[1].expression")
    assert main(["check", "-o", "sarif", "."]) == 1
    ((rule, uri, line, _, _),) = sarif_results(capsys.readouterr().out)
    assert (rule, uri, line) == ("crd-rejected", "p.yaml", 5)
    assert main(["check", "-o", "junit", "."]) == 1
    (failed,) = ET.fromstring(capsys.readouterr().out).findall("./testsuite/testcase/failure/..")
    assert (failed.get("file"), failed.get("line")) == ("p.yaml", "5")
    assert main(["check", "-o", "json", "."]) == 1
    skipped = [entry["skipped"] for entry in json.loads(capsys.readouterr().out) if "skipped" in entry]
    assert any(entry.startswith("gone.yaml: document 0: a patch of Deployment") for entry in skipped)


def test_at_several_versions_the_patched_object_is_checked(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--k8s-version", "1.30-1.31", "."]) == 1
    out = capsys.readouterr().out
    assert "w.yaml: document 0: ValidatingWebhookConfiguration w: rejected on every version" in out
    assert "gone.yaml" not in out  # the patch of nothing is not an object checked at each version
    (tree / "p.yaml").write_text(BAD_CONDITION.replace("== ", "== 'w'"))
    assert main(["check", "--k8s-version", "1.30-1.31", "."]) == 0


def test_a_good_patched_tree_is_green_and_the_patch_alone_is_not_an_object(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "p.yaml").write_text(BAD_CONDITION.replace("== ", "== 'w'"))
    assert main(["check", "."]) == 0
    assert main(["check", "p.yaml"]) == 0  # a hook given the patch alone: the kustomization beside it says what it is
    err = capsys.readouterr().err
    assert "must be an object" not in err and "error" not in err


def test_validate_does_not_read_a_patch_as_an_object(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crd = Path(__file__).parents[3] / "examples" / "widget-crd.yaml"
    assert main(["validate", "-v", "--crd", str(crd), "."]) == 0
    out, err = capsys.readouterr()
    assert "p.yaml: skipped: a kustomize patch, not an object" in out.splitlines()
    assert "gone.yaml: skipped: a kustomize patch, not an object" in out.splitlines()
    assert "error" not in err


def test_check_help_says_what_happens_to_kustomizations(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "each patch is applied to its target as kustomize applies it" in " ".join(capsys.readouterr().out.split())


def test_a_component_config_in_a_crds_group_is_no_schema_and_a_typo_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crd = str(Path(__file__).parents[3] / "examples" / "widget-crd.yaml")
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: example.com/v1\nkind: Configuration\nmetadata: {name: c}\n")
    assert main(["validate", "-v", "--crd", crd, str(config)]) == 0
    assert "skipped: no schema: no CRD defines Configuration (example.com/v1); its group's CRDs define Widget" in (
        capsys.readouterr().out
    )
    assert main(["validate", "--strict", "--crd", crd, str(config)]) == 1
    config.write_text("apiVersion: example.com/v1\nkind: widgets\nmetadata: {name: c}\n")
    assert main(["validate", "--crd", crd, str(config)]) == 1  # close to Widget: a typo
    assert "no CRD given for apiVersion example.com/v1, kind widgets" in capsys.readouterr().err
