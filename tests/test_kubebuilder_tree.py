"""A kubebuilder project as controller-gen lays it out, checked as its CI would: green when good, and each problem
reported on its file and line when not."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from kcel.cli import main
from tests.conftest import sarif_results

EXAMPLES = Path(__file__).parent.parent / "examples"
KUSTOMIZATION = "resources:\n- {}\n# +kubebuilder:scaffold:manifestskustomizesamples\n"
ROLE = """apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups: [example.com]
  resources: [widgets]
  verbs: [get, list, watch]
"""
VALID_SAMPLE = """apiVersion: example.com/v1
kind: Widget
metadata:
  name: widget-sample
spec:
  mode: Safe
  replicas: 1
  maxReplicas: 3
"""


README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
(README_MAKEFILE,) = re.findall(r"```make\n(.*?)```", README, flags=re.S)  # the target the README shows


def tree(root: Path, crd: str, sample: str) -> Path:
    """config/crd/bases, config/samples, config/rbac and their kustomization files, and a Makefile target."""
    files = {
        "config/crd/bases/example.com_widgets.yaml": crd,
        "config/crd/kustomization.yaml": KUSTOMIZATION.format("bases/example.com_widgets.yaml"),
        "config/samples/example_v1_widget.yaml": sample,
        "config/samples/kustomization.yaml": KUSTOMIZATION.format("example_v1_widget.yaml"),
        "config/rbac/role.yaml": ROLE,
        "config/rbac/kustomization.yaml": KUSTOMIZATION.format("role.yaml"),
        "Makefile": README_MAKEFILE,
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "config"


def test_a_good_tree_is_green(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tree(tmp_path, (EXAMPLES / "widget-crd.yaml").read_text(), VALID_SAMPLE)
    assert main(["check", str(config)]) == 0
    assert "1 CRD, 3 rules: 0 rejected, 5 skipped" in capsys.readouterr().err
    assert main(["validate", "--crd", str(config / "crd/bases"), str(config / "samples")]) == 0
    assert "2 objects in 2 files: 1 valid, 0 invalid, 0 not validated, 1 skipped" in capsys.readouterr().err
    assert main(["test", str(tmp_path)]) == 0  # no suite yet: said, and green


GO_TYPES = """package v1

// WidgetSpec defines the desired state of Widget.
// +kubebuilder:validation:XValidation:rule="self.mode == oldSelf.mode",message="mode is immutable"
// +kubebuilder:validation:XValidation:rule="self.replicas <= ",message="replicas must not exceed maxReplicas"
type WidgetSpec struct {
	Replicas int32 `json:"replicas"`
}
"""


def test_a_bad_rule_and_a_bad_sample_are_reported_on_their_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    crd = (EXAMPLES / "widget-crd.yaml").read_text().replace("self.replicas <= self.maxReplicas", "self.replicas <= ")
    sample = ROLE + "---\n" + VALID_SAMPLE.replace("maxReplicas: 3", "maxReplicas: 0")
    config = tree(tmp_path, crd, sample)
    (tmp_path / "go.mod").write_text("module example.com/widget\n")
    (tmp_path / "api/v1").mkdir(parents=True)
    (tmp_path / "api/v1/widget_types.go").write_text(GO_TYPES)  # the markers controller-gen made the CRD from
    monkeypatch.chdir(tmp_path)
    assert main(["check", "config"]) == 1
    bases = "config/crd/bases/example.com_widgets.yaml"
    rule_line, text = next((i, t) for i, t in enumerate(Path(bases).read_text().splitlines(), 1) if "replicas <= " in t)
    column = text.index('"') + 1 + len("self.replicas <= ") + 1  # the error is at the end of the expression
    assert (
        f"  at {bases}:{rule_line}:{column}: spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations"
        "[0].rule (the marker at api/v1/widget_types.go:5)"
    ) in capsys.readouterr().out.splitlines()
    assert main(["check", "-o", "github", "config"]) == 1
    on_yaml, on_go = capsys.readouterr().out.splitlines()
    cause = "title=kcel::Syntax error: mismatched input '<EOF>'"  # the cause first, then the API server's text
    assert on_yaml.startswith(f"::error file={bases},line={rule_line},col={column},{cause}")
    assert "%0A%0Awidgets.example.com: spec." in on_yaml
    assert on_yaml.endswith("(the marker at api/v1/widget_types.go:5)")
    assert on_go.startswith(f"::error file=api/v1/widget_types.go,line=5,{cause}")
    assert main(["check", "-o", "sarif", "config"]) == 1
    sarif = capsys.readouterr().out
    (result,) = sarif_results(sarif)  # one finding: the YAML rule, with its Go marker as a related location
    assert result[:4] == ("crd-rejected", bases, rule_line, column) and "Syntax error" in result[4]
    (related,) = json.loads(sarif)["runs"][0]["results"][0]["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "api/v1/widget_types.go"
    assert related["physicalLocation"]["region"] == {"startLine": 5}
    assert main(["check", "-o", "junit", "config"]) == 1
    rejected = ET.fromstring(capsys.readouterr().out).find("./testsuite/testcase/failure/..")
    assert rejected is not None and (rejected.get("file"), rejected.get("line")) == (bases, str(rule_line))
    config = tmp_path / "config"
    good = tree(tmp_path / "good", (EXAMPLES / "widget-crd.yaml").read_text(), sample)
    assert main(["validate", "-o", "github", "--crd", str(good / "crd/bases"), str(config / "samples")]) == 1
    (annotation,) = capsys.readouterr().out.splitlines()
    spec_line = next(i for i, text in enumerate(sample.splitlines(), 1) if text == "spec:")  # the field it names
    assert annotation.startswith(f"::error file={config}/samples/example_v1_widget.yaml,line={spec_line},title=kcel::")
    assert "replicas must not exceed maxReplicas" in annotation
    assert main(["validate", "-o", "sarif", "--crd", str(good / "crd/bases"), str(config / "samples")]) == 1
    ((rule, uri, line, _, message),) = sarif_results(capsys.readouterr().out)
    assert (rule, uri, line) == ("object-invalid", "config/samples/example_v1_widget.yaml", spec_line)
    assert main(["validate", "-o", "junit", "--crd", str(good / "crd/bases"), str(config / "samples")]) == 1
    invalid = ET.fromstring(capsys.readouterr().out).find("./testsuite/testcase/failure/..")
    assert invalid is not None and invalid.get("file") == f"{config}/samples/example_v1_widget.yaml"


HOOK_ARGS = {"kcel-validate": ["--crd", "config/crd"]}  # as the README and the hooks file tell a project to set


@pytest.mark.parametrize("good", [True, False])
def test_the_pre_commit_hooks_run_on_the_tree(tmp_path: Path, good: bool) -> None:
    """Each hook of `.pre-commit-hooks.yaml` as pre-commit runs it: its entry, the project's args, and the tree's
    files its `files` pattern matches (unless pass_filenames is false)."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "kcel").exists():
        pytest.skip(f"no kcel script beside {sys.executable} (not an installed environment)")
    sample = VALID_SAMPLE if good else VALID_SAMPLE.replace("maxReplicas: 3", "maxReplicas: 0")
    tree(tmp_path, (EXAMPLES / "widget-crd.yaml").read_text(), sample)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    hooks = yaml.safe_load((Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    outcomes = {}
    for hook in hooks:
        matched = [f for f in files if re.search(hook["files"], f)] if hook.get("pass_filenames", True) else []
        if hook.get("pass_filenames", True) and not matched:
            continue  # pre-commit runs a hook only when some file matches
        command = [*hook["entry"].split(), *HOOK_ARGS.get(hook["id"], []), *matched]
        outcomes[hook["id"]] = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        ).returncode
    assert outcomes == {"kcel-check": 0, "kcel-validate": 0 if good else 1, "kcel-test": 0}
    if shutil.which("make"):  # the project's Makefile target runs the same three commands
        made = subprocess.run(["make", "kcel"], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert (made.returncode == 0) is good, made.stdout + made.stderr


def readme_workflow_steps() -> list[str]:
    """The `run:` lines of the README's GitHub Actions recipes that call kcel (the install step aside)."""
    blocks = re.findall(r"```yaml\n(.*?)```", README, flags=re.S)
    runs = [m.split(" #")[0].strip() for b in blocks for m in re.findall(r"- run: (.*)", b)]
    return [run for run in runs if run.startswith("kcel ")]


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
def test_the_readme_ci_recipe_runs_green_on_the_tree(tmp_path: Path) -> None:
    """Each kcel step of the README's workflows, in bash as the runner runs it, on a good tree: exit 0, and the
    SARIF it writes for code scanning is schema-valid."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "kcel").exists():
        pytest.skip(f"no kcel script beside {sys.executable} (not an installed environment)")
    tree(tmp_path, (EXAMPLES / "widget-crd.yaml").read_text(), VALID_SAMPLE)
    steps = readme_workflow_steps()
    assert any("-o sarif" in step for step in steps) and any("kcel test" in step for step in steps)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    for step in steps:
        done = subprocess.run(["bash", "-c", step], cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (step, done.stdout, done.stderr)
    assert sarif_results((tmp_path / "kcel.sarif").read_text()) == []
    assert ET.parse(tmp_path / "kcel-test.xml").getroot().get("tests") == "0"
