"""kustomize trees built as kustomize builds them: which files are patches, how each patch changes its target, and
where each field of a patched object was written."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.k8s.kustomize.traces import Origins
from kcel.k8s.kustomize.tree import Tree, read_tree, selector_matches

CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
  names: {kind: Foo, plural: foos}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: "true"
  - name: v2
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
"""
WEBHOOKS = """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: w
webhooks:
- name: a.example.com
  sideEffects: None
  matchConditions:
  - name: one
    expression: "true"
- name: b.example.com
  sideEffects: None
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _patched(tree: Tree, file: Path) -> list[tuple[Any, Origins]]:
    return [(document.value, origins) for document, origins in tree.patched[str(file.resolve())]]


def test_a_crd_strategic_merge_is_a_json_merge_patch(tmp_path: Path) -> None:
    """As kustomize v5.5 builds it (checked with `kubectl kustomize`): CRDs have no merge keys in kustomize's
    schema, so `spec.versions` is replaced whole, maps merge, nulls delete."""
    patch = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
             "metadata:\n  name: foos.example.com\nspec:\n  scope: null\n  versions:\n  - name: v1\n"
             "    schema:\n      openAPIV3Schema:\n"
             "        x-kubernetes-validations:\n        - rule: self.x\n")  # fmt: skip
    root = _write(tmp_path, {"crd.yaml": CRD, "p.yaml": patch, "kustomization.yaml": "resources: [crd.yaml]\n"
                             "patches:\n- path: p.yaml\n"})  # fmt: skip
    tree = read_tree(_files(root))
    ((value, origins),) = _patched(tree, root / "crd.yaml")
    assert value["spec"] == {"group": "example.com", "names": {"kind": "Foo", "plural": "foos"},
                             "versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
                                 "x-kubernetes-validations": [{"rule": "self.x"}]}}}]}  # fmt: skip
    assert tree.role(root / "p.yaml") == "patch" and tree.role(root / "kustomization.yaml") == "kustomization"
    assert (tree.applied, tree.not_applied, tree.problems) == (1, [], [])
    rule = (("spec", ""), ("versions", ""), ("", "0"), ("schema", ""), ("openAPIV3Schema", ""),
            ("x-kubernetes-validations", ""), ("", "0"), ("rule", ""))  # fmt: skip
    file, document, path = origins.locate(rule)
    assert (file, document) == (str(root / "p.yaml"), 0) and path == rule  # the patch wrote the whole list
    assert origins.locate((("spec", ""), ("group", ""))) == (str(root / "crd.yaml"), 0, (("spec", ""), ("group", "")))


def test_webhooks_merge_by_name_and_their_match_conditions_are_replaced(tmp_path: Path) -> None:
    """kustomize's schema merges `webhooks` by name, the patch's items first; `matchConditions` (newer than its
    Kubernetes 1.21 schema) is replaced."""
    patch = ("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n"
             "  name: w\nwebhooks:\n- name: b.example.com\n  matchConditions:\n  - name: two\n"
             "    expression: \"false\"\n")  # fmt: skip
    kustomization = "resources: [w.yaml]\npatchesStrategicMerge: [p.yaml]\n"
    root = _write(tmp_path, {"w.yaml": WEBHOOKS, "p.yaml": patch, "kustomization.yaml": kustomization})
    ((value, origins),) = _patched(read_tree(_files(root)), root / "w.yaml")
    assert value["webhooks"] == [
        {"name": "b.example.com", "sideEffects": "None", "matchConditions": [{"name": "two", "expression": "false"}]},
        {"name": "a.example.com", "sideEffects": "None", "matchConditions": [{"name": "one", "expression": "true"}]},
    ]
    expression = (("webhooks", ""), ("", "0"), ("matchConditions", ""), ("", "0"), ("expression", ""))
    assert origins.locate(expression)[0] == str(root / "p.yaml")
    base = origins.locate((("webhooks", ""), ("", "1"), ("matchConditions", ""), ("", "0"), ("expression", "")))
    assert base == (str(root / "w.yaml"), 0, (("webhooks", ""), ("", "0"), ("matchConditions", ""), ("", "0"),
                                              ("expression", "")))  # fmt: skip


def test_json_6902_operations_are_traced_one_by_one(tmp_path: Path) -> None:
    """A rule inserted before the base's shifts the base's index; each field is found where it is written."""
    patch = ("- op: add\n  path: /spec/versions/0/schema/openAPIV3Schema/x-kubernetes-validations/0\n"
             "  value: {rule: self.added}\n- op: remove\n  path: /spec/versions/1\n"
             "- op: replace\n  path: /spec/scope\n  value: Cluster\n")  # fmt: skip
    kustomization = ("resources: [crd.yaml]\npatches:\n- path: p.yaml\n  target:\n    group: apiextensions.k8s.io\n"
                     "    kind: CustomResource.*\n    name: foos\\..*\n")  # fmt: skip
    root = _write(tmp_path, {"crd.yaml": CRD, "p.yaml": patch, "kustomization.yaml": kustomization})
    ((value, origins),) = _patched(read_tree(_files(root)), root / "crd.yaml")
    rules = value["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"]
    assert rules == [{"rule": "self.added"}, {"rule": "true"}]
    assert len(value["spec"]["versions"]) == 1 and value["spec"]["scope"] == "Cluster"
    at = (("spec", ""), ("versions", ""), ("", "0"), ("schema", ""), ("openAPIV3Schema", ""),
          ("x-kubernetes-validations", ""))  # fmt: skip
    assert origins.locate((*at, ("", "0"), ("rule", ""))) == (str(root / "p.yaml"), 0,
                                                              (("", "0"), ("value", ""), ("rule", "")))  # fmt: skip
    assert origins.locate((*at, ("", "1"), ("rule", ""))) == (str(root / "crd.yaml"), 0, (*at, ("", "0"), ("rule", "")))
    assert origins.locate((("spec", ""), ("scope", "")))[:2] == (str(root / "p.yaml"), 0)


def test_an_inline_patch_is_shown_at_its_kustomization(tmp_path: Path) -> None:
    kustomization = ("resources: [crd.yaml]\npatches:\n- target: {kind: CustomResourceDefinition}\n  patch: |-\n"
                     "    - op: add\n      path: /metadata/labels\n      value: {a: b}\n")  # fmt: skip
    root = _write(tmp_path, {"crd.yaml": CRD, "kustomization.yaml": kustomization})
    ((value, origins),) = _patched(read_tree(_files(root)), root / "crd.yaml")
    assert value["metadata"]["labels"] == {"a": "b"}
    file, _, path = origins.locate((("metadata", ""), ("labels", ""), ("a", "")))
    assert (file, path) == (str(root / "kustomization.yaml"), (("patches", ""), ("", "0"), ("patch", "")))


def test_patches_without_a_target_in_the_tree_are_counted_not_applied(tmp_path: Path) -> None:
    other = CRD.replace("foos.example.com", "bars.example.com")
    root = _write(tmp_path, {
        "crd.yaml": CRD, "other.yaml": other,
        "kustomization.yaml": "resources: [crd.yaml]\npatches:\n- path: other.yaml\n"
                              "- path: ops.yaml\n  target: {kind: Deployment}\n",
        "ops.yaml": "- op: remove\n  path: /spec\n",
        "loose/cainjection_in_foos.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
                                          "metadata:\n  name: foos.example.com\n",
        "loose/ops.yaml": "- op: add\n  path: /a\n  value: 1\n",
        "loose/role.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    })  # fmt: skip
    tree = read_tree(_files(root))
    assert tree.applied == 0 and tree.patched == {} and tree.problems == []
    assert [line.partition(": ")[0] for line in tree.not_applied] == [
        str(root / "other.yaml"), str(root / "ops.yaml"), str(root / "loose/cainjection_in_foos.yaml"),
        str(root / "loose/ops.yaml")]  # fmt: skip
    assert "no such object among the resources of" in tree.not_applied[0]
    assert "no kustomization of the tree names it" in tree.not_applied[2]
    assert tree.role(root / "loose/role.yaml") == ""  # a whole object: checked by what it is


def test_a_hook_given_one_patch_file_knows_it_for_a_patch(tmp_path: Path) -> None:
    """The kustomization of the folders above a file given alone is read (pre-commit passes changed files)."""
    root = _write(tmp_path, {"config/crd/bases/crd.yaml": CRD, "config/crd/patches/p.yaml": "- op: test\n  path: /a\n",
                             "config/crd/kustomization.yaml": "resources: [bases/crd.yaml]\n"
                             "patches:\n- path: patches/p.yaml\n  target: {kind: Nothing}\n"})  # fmt: skip
    tree = read_tree([root / "config/crd/patches/p.yaml"])
    assert tree.role(root / "config/crd/patches/p.yaml") == "patch" and len(tree.not_applied) == 1


def test_components_bases_and_folders(tmp_path: Path) -> None:
    """A base folder's objects and a component's, patched by the component and by the overlay, in that order."""
    root = _write(tmp_path, {
        "base/crd.yaml": CRD, "base/kustomization.yaml": "resources: [crd.yaml]\n",
        "component/w.yaml": WEBHOOKS,
        "component/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
                                        "resources: [w.yaml]\npatches:\n- target: {kind: CustomResourceDefinition}\n"
                                        "  patch: '[{op: replace, path: /spec/scope, value: Cluster}]'\n",
        "overlay/kustomization.yaml": "bases: [../base]\ncomponents: [../component]\npatchesJson6902:\n"
                                      "- target: {group: apiextensions.k8s.io, version: v1, kind: "
                                      "CustomResourceDefinition, name: foos.example.com}\n"
                                      "  patch: '[{op: test, path: /spec/scope, value: Cluster}, "
                                      "{op: add, path: /spec/preserveUnknownFields, value: false}]'\n",
    })  # fmt: skip
    tree = read_tree(_files(root))
    assert tree.problems == [] and tree.applied == 2
    ((value, origins),) = _patched(tree, root / "base/crd.yaml")
    assert value["spec"]["scope"] == "Cluster" and value["spec"]["preserveUnknownFields"] is False
    assert origins.patched_by == (str(root / "component/kustomization.yaml"), str(root / "overlay/kustomization.yaml"))


def test_bad_kustomizations_are_problems_at_their_files(tmp_path: Path) -> None:
    root = _write(tmp_path, {
        "a/kustomization.yaml": "resources: [../b, missing.yaml, https://example.com/x.yaml, "
                                "github.com/org/repo/config?ref=v1]\n",
        "b/kustomization.yaml": "resources: [../a]\n",  # a cycle
        "c/kustomization.yaml": "resources: {not: a list}\n",
        "d/kustomization.yaml": "- just\n- a list\n",
        "e/kustomization.yaml": "resources: [crd.yaml]\npatchesJson6902:\n- path: p.yaml\n",
        "e/crd.yaml": CRD,
        "e/p.yaml": "- op: add\n  path: /a\n",
    })  # fmt: skip
    tree = read_tree(_files(root))
    problems = "\n".join(tree.problems)
    assert f"{root}/a/kustomization.yaml: missing.yaml: no such file or folder" in problems
    assert f"{root}/a/kustomization.yaml: in a cycle of kustomizations" in problems
    assert f"{root}/c/kustomization.yaml: resources: must be a list of strings" in problems
    assert f"{root}/d/kustomization.yaml: a kustomization must be a mapping" in problems
    assert f"{root}/e/kustomization.yaml: patchesJson6902[0].target: required" in problems
    assert [entry.split(": ")[1] for entry in tree.remote] == ["https://example.com/x.yaml",
                                                               "github.com/org/repo/config?ref=v1"]  # fmt: skip


def test_a_patch_that_fails_is_a_problem_only_on_an_object_that_is_checked(tmp_path: Path) -> None:
    deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {}\n"
    root = _write(tmp_path, {"crd.yaml": CRD, "d.yaml": deployment, "p.yaml": "- op: remove\n  path: /spec/nothing\n",
                             "kustomization.yaml": "resources: [crd.yaml, d.yaml]\npatches:\n"
                             "- path: p.yaml\n  target: {name: .*}\n"})  # fmt: skip
    tree = read_tree(_files(root), lambda obj: obj.get("kind") == "CustomResourceDefinition")
    (problem,) = tree.problems
    assert problem.startswith(f"{root}/p.yaml: document 0: cannot be applied to CustomResourceDefinition foos.example")
    assert "operation 0 (remove /spec/nothing)" in problem


def test_a_deep_chain_of_kustomizations_stops_at_the_limit(tmp_path: Path) -> None:
    files = {f"k{i}/kustomization.yaml": f"resources: [../k{i + 1}]\n" for i in range(80)}
    root = _write(tmp_path, {**files, "k80/kustomization.yaml": "resources: []\n"})
    tree = read_tree([root / "k0/kustomization.yaml"])
    assert any("a chain of more than 50" in problem for problem in tree.problems)


@pytest.mark.parametrize(
    ("selector", "matches"),
    [("app=web", True), ("app==web,tier!=db", True), ("app in (web, api)", True), ("app notin (web)", False),
     ("tier", False), ("!tier", True), ("app=api", False), ("a b c", False)],
)  # fmt: skip
def test_label_selectors(selector: str, matches: bool) -> None:
    assert selector_matches(selector, {"app": "web"}) is matches


def test_the_build_equals_kubectl_kustomize(tmp_path: Path) -> None:
    """The patched objects against `kubectl kustomize`'s (kustomize v5) on a tree of each kind of patch."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on this machine (its kustomize is the reference)")
    smp = ("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: w\n"
           "webhooks:\n- name: a.example.com\n  matchConditions:\n  - name: two\n    expression: \"false\"\n"
           "- name: c.example.com\n  sideEffects: None\n")  # fmt: skip
    crd_patch = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
                 "  name: foos.example.com\n  annotations: {x: z}\nspec:\n  names: {singular: foo}\n"
                 "  versions:\n  - name: v1\n    served: true\n    storage: true\n")  # fmt: skip
    ops = "- op: add\n  path: /spec/versions/0/schema\n  value: {openAPIV3Schema: {type: object}}\n"
    root = _write(tmp_path, {
        "crd.yaml": CRD, "w.yaml": WEBHOOKS, "smp.yaml": smp, "crd_patch.yaml": crd_patch, "ops.yaml": ops,
        "kustomization.yaml": "resources: [crd.yaml, w.yaml]\npatchesStrategicMerge: [smp.yaml]\npatches:\n"
                              "- path: crd_patch.yaml\n- path: ops.yaml\n  target: {kind: CustomResourceDefinition}\n",
    })  # fmt: skip
    built = subprocess.run([kubectl, "kustomize", str(root)], capture_output=True, text=True, check=True, timeout=120)
    expected = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(built.stdout)}
    tree = read_tree(_files(root))
    found = {}
    for file in ("crd.yaml", "w.yaml"):
        ((value, _),) = _patched(tree, root / file)
        found[value["kind"], value["metadata"]["name"]] = value
    assert found == expected
