"""Writing suites and their files into a temporary folder, and running `kcel test` on them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

WIDGET = {
    "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
    "spec": {"replicas": 2, "maxReplicas": 3, "mode": "Safe",
             "containers": [{"name": "app", "image": "registry.example.com/app:1.2"}]},
}  # fmt: skip

# A CRD with a status subresource, a defaulted field and a rule on status.
GADGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Gadget", "plural": "gadgets"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {
                                   "size": {"type": "integer", "default": 1},
                                   "colour": {"type": "string"}}},
                               "status": {"type": "object", "properties": {"ready": {"type": "integer"}},
                                          "x-kubernetes-validations": [
                                              {"rule": "self.ready >= 0", "message": "ready is never negative"}]},
                           }}}}]},
}  # fmt: skip
GADGET = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g1"}, "spec": {"size": 2}}


def write(path: Path, *documents: Any) -> Path:
    """YAML documents into a file (strings are written as they are)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    texts = [d if isinstance(d, str) else yaml.safe_dump(d, sort_keys=False) for d in documents]
    path.write_text("---\n".join(texts), encoding="utf-8")
    return path


def widget_folder(tmp_path: Path) -> Path:
    """A folder with the widget CRD, the gadget CRD and the example widget."""
    shutil.copy(EXAMPLES / "widget-crd.yaml", tmp_path / "widget-crd.yaml")
    shutil.copy(EXAMPLES / "widget.yaml", tmp_path / "widget.yaml")
    write(tmp_path / "gadget-crd.yaml", GADGET_CRD)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`kcel test ARGS`: exit status, stdout, stderr."""
    status = main(["test", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err
