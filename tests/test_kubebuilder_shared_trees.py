"""The `config/` trees of three real kubebuilder projects (../shared/kubebuilder: jobset, lws,
cluster-api-provider-gcp), run as their CI would run kcel: the README's recipes, the pre-commit hooks and the
GitHub Action are green on each; and a copy with a bad rule brought in by a kustomize patch and a bad sample is red
at the patch's and the sample's lines, in every output format."""

from __future__ import annotations

import os
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

ROOT = Path(__file__).parent.parent
SHARED = ROOT.parent / "shared" / "kubebuilder"
CRD_FOLDERS = {"jobset": "config/components/crd/bases", "lws": "config/crd/bases",
               "cluster-api-provider-gcp": "config/crd/bases"}  # fmt: skip
TREES = sorted(CRD_FOLDERS)


def _tree(name: str) -> Path:
    if not (SHARED / name / "config").is_dir():
        pytest.skip(f"{SHARED / name / 'config'} is absent (the shared kubebuilder trees are not beside the checkout)")
    return SHARED / name


def _copy(name: str, tmp_path: Path) -> Path:
    copied = tmp_path / name
    shutil.copytree(_tree(name), copied)
    return copied


def _environment(home: Path) -> dict[str, str]:
    """The variables a hook or an Action step runs with: this interpreter's scripts first (and the tree under test,
    when PYTHONPATH points kcel at one)."""
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "kcel").exists():
        pytest.skip(f"no kcel script beside {sys.executable} (not an installed environment)")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home)}
    return env | ({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {})


@pytest.mark.parametrize("name", TREES)
def test_kcel_check_config_is_green(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_tree(name))
    assert main(["check", "config/"]) == 0
    err = capsys.readouterr().err
    assert "error" not in err
    summary = err.splitlines()[-1]
    counted = r"CRDs?, \d+ rules?, .*: 0 rejected, \d+ skipped, (\d+ lints?, )?\d+ patches applied"
    assert re.search(counted, summary), summary


@pytest.mark.parametrize("name", TREES)
def test_kcel_validate_samples_is_green(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_tree(name))
    if not Path("config/samples").is_dir():
        pytest.skip(f"{name} ships no config/samples")
    assert main(["validate", "-v", "--crd", CRD_FOLDERS[name], "config/samples"]) == 0
    out, err = capsys.readouterr()
    assert re.search(r": [1-9]\d* valid, 0 invalid, 0 not validated", err), err
    if name == "jobset":  # its component config is in its CRD's group: no schema, not an error
        assert re.search(r"_configuration\.yaml: document 0: skipped: no schema: no CRD defines Configuration", out)


@pytest.mark.parametrize("name", TREES)
def test_the_pre_commit_hooks_are_green(name: str, tmp_path: Path) -> None:
    """Each hook of `.pre-commit-hooks.yaml` as pre-commit runs it on the whole tree: its entry, the args the hooks
    file tells a project to set, and every file its `files` pattern matches."""
    tree = _copy(name, tmp_path)
    env = _environment(tmp_path)
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    args = {"kcel-validate": ["--crd", CRD_FOLDERS[name]]}
    for hook in hooks:
        matched = [f for f in files if re.search(hook["files"], f)] if hook.get("pass_filenames", True) else []
        if hook.get("pass_filenames", True) and not matched:
            continue  # pre-commit runs a hook only when some file matches
        command = [*hook["entry"].split(), *args.get(hook["id"], []), *matched]
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (hook["id"], done.stdout[-2000:], done.stderr[-2000:])


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash on this machine")
@pytest.mark.parametrize("name", TREES)
def test_the_action_is_green(name: str, tmp_path: Path) -> None:
    """The Action's run step with `command: check config/`, as the runner runs it: no annotation, exit 0."""
    tree = _copy(name, tmp_path)
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    (step,) = [s for s in action["runs"]["steps"] if s.get("name") == "kcel"]
    env = _environment(tmp_path) | {"KCEL_COMMAND": "check config/"}
    done = subprocess.run(["bash", "-c", step["run"]], cwd=tree, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::error" not in done.stdout


@pytest.mark.parametrize("name", TREES)
def test_kustomize_build_piped_to_kcel_check(name: str, tmp_path: Path) -> None:
    """`kustomize build config/default | kcel check -`, with kubectl's kustomize when the machine has kubectl."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on this machine (its kustomize builds the tree)")
    built = subprocess.run([kubectl, "kustomize", "config/default"], cwd=_tree(name), capture_output=True,
                           text=True, check=False, timeout=120)  # fmt: skip
    assert built.returncode == 0, built.stderr
    env = _environment(tmp_path)
    done = subprocess.run(["kcel", "check", "-"], input=built.stdout, env=env, capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"CRDs?, \d+ rules?, .*: 0 rejected", done.stderr), done.stderr


BAD_RULE = "self.spec.replicatedJobs.size() <= "
PATCH = f"""# a rule added to the JobSet CRD by a kustomize patch
- op: add
  path: /spec/versions/0/schema/openAPIV3Schema/x-kubernetes-validations
  value:
  - rule: "{BAD_RULE}"
    message: too many replicated jobs
"""


def _red_jobset(tmp_path: Path) -> Path:
    """jobset with a JSON 6902 patch that adds a rule that does not compile, and a sample of the wrong type."""
    tree = _copy("jobset", tmp_path)
    (tree / "config/components/crd/patches/bad_rule.yaml").write_text(PATCH)
    kustomization = tree / "config/components/crd/kustomization.yaml"
    entry = "- path: patches/bad_rule.yaml\n  target:\n    kind: CustomResourceDefinition\n"
    kustomization.write_text(kustomization.read_text().replace("patches:\n", "patches:\n" + entry, 1))
    sample = tree / "config/samples/batch_v1alpha2_jobset.yaml"
    sample.write_text(sample.read_text().replace("spec:\n", 'spec:\n  suspend: "maybe"\n', 1))
    return tree


def test_a_patched_bad_rule_and_a_bad_sample_are_red_at_their_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(_red_jobset(tmp_path))
    patch = "config/components/crd/patches/bad_rule.yaml"
    rule_line = 5
    column = PATCH.splitlines()[rule_line - 1].index('"') + 1 + len(BAD_RULE) + 1  # the end of the expression
    assert main(["check", "config/"]) == 1
    out = capsys.readouterr().out
    assert f"  at {patch}:{rule_line}:{column}: spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule" in (
        out.splitlines()
    ), out
    assert main(["check", "-o", "github", "config/"]) == 1
    (annotation,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::error")]
    assert annotation.startswith(f"::error file={patch},line={rule_line},col={column},title=kcel::Syntax error: ")
    assert "%0A%0Ajobsets.jobset.x-k8s.io: spec.validation" in annotation  # the cause first, then the API's text
    assert main(["check", "-o", "sarif", "config/"]) == 1
    (result,) = [r for r in sarif_results(capsys.readouterr().out) if r[0] == "crd-rejected"]  # none twice
    assert result[:4] == ("crd-rejected", patch, rule_line, column) and "Syntax error" in result[4]
    assert main(["check", "-o", "junit", "config/"]) == 1
    (failed,) = ET.fromstring(capsys.readouterr().out).findall("./testsuite/testcase/failure/..")
    assert (failed.get("file"), failed.get("line")) == (patch, str(rule_line))

    sample, suspend_line = "config/samples/batch_v1alpha2_jobset.yaml", 12
    assert Path(sample).read_text().splitlines()[suspend_line - 1] == '  suspend: "maybe"'
    crds = "config/components/crd/bases"
    assert main(["validate", "--crd", crds, "config/samples"]) == 1
    out = capsys.readouterr().out
    assert f"  at {sample}:{suspend_line}: spec.suspend" in out.splitlines(), out
    assert main(["validate", "-o", "github", "--crd", crds, "config/samples"]) == 1
    annotation, *_ = capsys.readouterr().out.splitlines()  # then the API server's "rules not checked" cause
    assert annotation.startswith(f"::error file={sample},line={suspend_line},title=kcel::") and "boolean" in annotation
    assert main(["validate", "-o", "sarif", "--crd", crds, "config/samples"]) == 1
    results = sarif_results(capsys.readouterr().out)
    assert len(set(results)) == len(results)  # one result per cause, none twice
    (rule, uri, line, _, message), *_ = results
    assert (rule, uri, line) == ("object-invalid", sample, suspend_line) and "spec.suspend" in message
    assert main(["validate", "-o", "junit", "--crd", crds, "config/samples"]) == 1
    (invalid,) = ET.fromstring(capsys.readouterr().out).findall("./testsuite/testcase/failure/..")
    assert invalid.get("file") == sample


def test_the_rule_a_base_holds_is_still_reported_at_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad rule in the patched CRD's own file is reported there, not at a patch."""
    tree = _copy("jobset", tmp_path)
    monkeypatch.chdir(tree)
    bases = Path("config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml")
    bases.write_text(bases.read_text().replace("rule: self == oldSelf\n", "rule: self == oldSelf &&\n", 1))
    broken_line = next(i for i, t in enumerate(bases.read_text().splitlines(), 1) if t.endswith(" &&"))
    assert main(["check", "-o", "github", "config/"]) == 1
    (annotation,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::error")]
    assert annotation.startswith(f"::error file={bases},line={broken_line},")
