"""CI formats: findings as GitHub Actions workflow commands and SARIF on the file and line, JUnit XML."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kcel.cli import main
from kcel.findings import Finding, workflow_command
from tests.conftest import sarif_results

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_workflow_commands_escape_their_data_and_properties() -> None:
    assert workflow_command(Finding("error", "50% off\nnext", "a,b:c.yaml", 3)) == (
        "::error file=a%2Cb%3Ac.yaml,line=3,title=kcel::50%25 off%0Anext"
    )
    assert workflow_command(Finding("warning", "plain", title="")) == "::warning::plain"


def test_validate_annotates_each_error_on_the_line_of_its_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objects = tmp_path / "objects.yaml"
    valid = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: ok}\nspec: {replicas: 1, maxReplicas: 2}\n"
    objects.write_text(valid + "---\n" + (EXAMPLES / "widget.yaml").read_text())
    assert main(["validate", "-o", "github", "--crd", str(EXAMPLES / "widget-crd.yaml"), str(objects)]) == 1
    lines = objects.read_text().splitlines()
    spec = next(i for i, text in enumerate(lines, 1) if i > 5 and text == "spec:")
    image = next(i for i, text in enumerate(lines, 1) if text.strip().endswith(":latest"))
    assert capsys.readouterr().out.splitlines() == [
        f'::error file={objects},line={spec},title=kcel::Widget.example.com "w1": spec: Invalid value: replicas must '
        "not exceed maxReplicas in Safe mode",
        f'::error file={objects},line={image},title=kcel::Widget.example.com "w1": spec.containers[1].image: Invalid '
        "value: images must be pinned to a tag other than latest",
    ]


def test_check_annotates_each_error_on_the_line_of_its_rule(capsys: pytest.CaptureFixture[str]) -> None:
    crd = EXAMPLES / "expensive-crd.yaml"
    assert main(["check", "-o", "github", str(crd), str(EXAMPLES / "expensive-crd-fixed.yaml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    rule_line = next(i for i, text in enumerate(crd.read_text().splitlines(), 1) if "- rule:" in text)
    schema_line = next(i for i, text in enumerate(crd.read_text().splitlines(), 1) if "openAPIV3Schema:" in text)
    assert [line.split(",title")[0] for line in lines] == [
        f"::error file={crd},line={rule_line}", f"::error file={crd},line={rule_line}",
        f"::error file={crd},line={schema_line}",
    ]  # fmt: skip
    assert "x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget" in lines[0]


def test_test_annotates_the_failing_case_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "widget.kcel-test.yaml"
    suite.write_text((EXAMPLES / "widget.kcel-test.yaml").read_text().replace("expect: valid", "expect: invalid", 1))
    for name in ("widget-crd.yaml", "widget.yaml"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text())
    assert main(["test", "-o", "github", str(suite)]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    case_line = next(i for i, text in enumerate(suite.read_text().splitlines(), 1) if "expect: invalid" in text)
    assert line.startswith(f"::error file={suite},line=")
    reported = int(line.split("line=")[1].split(",")[0])
    assert reported < case_line  # the case's first line, above its expectation
    assert "expected: invalid" in line.replace("%0A", "\n")


def test_validate_and_check_write_junit_with_files_and_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objects = tmp_path / "objects.yaml"
    objects.write_text((EXAMPLES / "widget.yaml").read_text() + "---\nresources: [a.yaml]\n")
    assert main(["validate", "-o", "junit", "--crd", str(EXAMPLES / "widget-crd.yaml"), str(objects)]) == 1
    root = ET.fromstring(capsys.readouterr().out)
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("2", "1", "1")
    failed = root.find("./testsuite/testcase/failure/..")
    assert failed is not None and (failed.get("file"), failed.get("line")) == (str(objects), "1")
    crd = EXAMPLES / "expensive-crd.yaml"
    assert main(["check", "-o", "junit", str(crd), str(EXAMPLES / "widget-crd.yaml")]) == 1
    root = ET.fromstring(capsys.readouterr().out)
    assert (root.get("tests"), root.get("failures")) == ("2", "1")
    rejected = root.find("./testsuite/testcase/failure/..")
    rule_line = next(i for i, text in enumerate(crd.read_text().splitlines(), 1) if "- rule:" in text)
    assert rejected is not None and (rejected.get("file"), rejected.get("line")) == (str(crd), str(rule_line))


def test_kcel_test_junit_gives_each_case_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    suite = EXAMPLES / "widget.kcel-test.yaml"
    assert main(["test", "-o", "junit", str(suite)]) == 0
    cases = ET.fromstring(capsys.readouterr().out).findall("./testsuite/testcase")
    lines = suite.read_text().splitlines()
    for case in cases:
        line = int(case.get("line", "0"))
        assert line > 0 and case.get("name", "").split(" [")[0] in "\n".join(lines[line - 1 : line + 1])


POLICY = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas.example.com}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations:
  - expression: object.spec.replicas <= 5
    message: at most 5 replicas
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas.example.com}
spec: {policyName: replicas.example.com, validationActions: [Deny]}
"""


def deployments(folder: Path, separator: str) -> tuple[Path, Path]:
    """The policy file, and a file of two Deployments (1 replica, then 10, which the policy denies)."""
    policy, objects = folder / "policy.yaml", folder / "deployments.yaml"
    policy.write_text(POLICY)
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {}, namespace: default}}\nspec: {{replicas: {}}}\n"
    )
    objects.write_text(deployment.format("small", 1) + separator + deployment.format("big", 10))
    return policy, objects


def test_admit_annotates_a_denied_object_at_its_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy, objects = deployments(tmp_path, "---\n\n")
    assert main(["admit", "-o", "github", "--policy", str(policy), str(objects)]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith(f"::error file={objects},line=7,title=kcel admit::ValidatingAdmissionPolicy")
    assert line.endswith("denied request: at most 5 replicas")


BLOCK = "|\n" + " " * 20 + "self.replicas > 0 &&\n" + " " * 20 + "self.replicas <=\n" + " " * 18 + "message: m"
FOLDED = BLOCK.replace("|", ">", 1)


@pytest.mark.parametrize(
    ("rule", "line", "column"),
    [
        ('"self.replicas <= "', 0, 1 + 18),  # quoted: after the quote
        ("self.replicas <=", 0, 17),  # plain
        (BLOCK, 2, 37),  # a literal block: <input>:3:1, the end, after its last line's text (it needs a message)
        (FOLDED, 2, 37),  # folded: the same expression on the same lines
        ('"self.replicas\\t<= "', 0, 1 + 19),  # an escape: two characters of the file, one of the expression
        ("'self.replicas == ''x'' && '", 0, 1 + 27),  # '' is one quote
    ],
)  # fmt: skip
def test_a_compile_error_points_at_its_column_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rule: str, line: int, column: int
) -> None:
    """The expression's `<input>:L:C` mapped into the file; a block's lines are counted from the `|`."""
    crd = tmp_path / "crd.yaml"
    crd.write_text((EXAMPLES / "widget-crd.yaml").read_text().replace('"self.replicas <= self.maxReplicas"', rule))
    lines = crd.read_text().splitlines()
    rule_line = next(i for i, t in enumerate(lines, 1) if "- rule:" in t and ("replicas" in t or t[-1] in "|>"))
    start = lines[rule_line - 1].index("rule: ") + len("rule: ")  # 0-based: where the scalar starts
    expected = f"{rule_line + line}:{column if line else start + column}"
    assert main(["check", "-o", "github", str(crd)]) == 1
    (annotation,) = capsys.readouterr().out.splitlines()
    assert annotation.startswith(f"::error file={crd},line={expected.replace(':', ',col=')},title=kcel::")
    assert main(["check", str(crd)]) == 1
    assert f"  at {crd}:{expected}: spec." in capsys.readouterr().out


def test_every_ci_command_writes_schema_valid_sarif(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("widget-crd.yaml", "widget.yaml", "expensive-crd.yaml", "widget.kcel-test.yaml"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    assert main(["validate", "-o", "sarif", "--crd", "widget-crd.yaml", "widget.yaml"]) == 1
    validated = sarif_results(capsys.readouterr().out)
    assert [(rule, uri) for rule, uri, *_ in validated] == [("object-invalid", "widget.yaml")] * 2
    assert "replicas must not exceed maxReplicas" in validated[0][4] and validated[0][2] > 1
    assert main(["check", "-o", "sarif", "expensive-crd.yaml"]) == 1
    (rule, uri, line, _, message), *_ = sarif_results(capsys.readouterr().out)
    rule_line = next(i for i, text in enumerate(Path(uri).read_text().splitlines(), 1) if "- rule:" in text)
    assert (rule, uri, line) == ("crd-rejected", "expensive-crd.yaml", rule_line) and "exceeds budget" in message
    suite = tmp_path / "widget.kcel-test.yaml"
    suite.write_text(suite.read_text().replace("expect: valid", "expect: invalid", 1))
    assert main(["test", "-o", "sarif", str(suite)]) == 1
    ((rule, uri, line, _, message),) = sarif_results(capsys.readouterr().out)
    assert (rule, uri) == ("test-failed", "widget.kcel-test.yaml") and line > 1 and "expected: invalid" in message
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "big.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: big, namespace: default}\nspec: {replicas: 10}\n"
    )
    assert main(["admit", "-o", "sarif", "--policy", "policy.yaml", "big.yaml"]) == 1
    ((rule, uri, line, _, message),) = sarif_results(capsys.readouterr().out)
    assert (rule, uri, line) == ("admission-denied", "big.yaml", 1) and message.endswith("at most 5 replicas")
    assert main(["check", "-o", "sarif", "widget-crd.yaml"]) == 0
    assert sarif_results(capsys.readouterr().out) == []  # a clean run is a log with no results


def test_admit_writes_junit_a_case_per_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy, objects = deployments(tmp_path, "---\n")
    assert main(["admit", "-o", "junit", "--policy", str(policy), str(objects)]) == 1
    root = ET.fromstring(capsys.readouterr().out)
    assert (root.get("tests"), root.get("failures")) == ("2", "1")
    denied = root.find("./testsuite/testcase/failure/..")
    assert denied is not None and (denied.get("file"), denied.get("line")) == (str(objects), "6")
    assert "Deployment big CREATE" in denied.get("name", "")
