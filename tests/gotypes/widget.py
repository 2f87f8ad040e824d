"""A Go API package for the tests of Go input (kcel check, the language server in pytest-lsp and Neovim): a Widget
kind whose Spec type has one XValidation marker, metav1 from a vendored stand-in (tests/gotypes/shop.py's), and no
CRD YAML unless asked for (then controller-gen v0.21.0's, tests/gotypes/golden/widget, in config/crd/bases, and a
sample in config/samples: a kubebuilder project's tree)."""

from __future__ import annotations

from pathlib import Path

from tests.gotypes.shop import SOURCES as SHOP_SOURCES

RULE = "self.replicas <= self.maxReplicas"
WIDGET_TYPES = f"""\
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WidgetSpec is what a widget should be.
// +kubebuilder:validation:XValidation:rule="{RULE}",message="replicas must not exceed maxReplicas"
type WidgetSpec struct {{
	// Replicas is how many widgets run.
	// +kubebuilder:validation:Maximum=100
	Replicas int32 `json:"replicas"`
	// MaxReplicas bounds replicas.
	MaxReplicas int32 `json:"maxReplicas"`
}}

// Widget is a thing that runs.
// +kubebuilder:object:root=true
type Widget struct {{
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec"`
}}
"""
_META = "k8s.io/apimachinery/pkg/apis/meta/v1"
FILES = {
    "go.mod": "module example.com/widgets\n\ngo 1.24\n\nrequire k8s.io/apimachinery v0.36.3\n",
    "vendor/modules.txt": "# k8s.io/apimachinery v0.36.3\n## explicit; go 1.24\nk8s.io/apimachinery/pkg/apis/meta/v1\n",
    f"vendor/{_META}/types.go": SHOP_SOURCES["gomodcache/k8s.io/apimachinery@v0.36.3/pkg/apis/meta/v1/types.go"],
    "api/v1/groupversion_info.go": "// Package v1 holds the widget API.\n// +groupName=widgets.example.com\n"
    "package v1\n",
    "api/v1/widget_types.go": WIDGET_TYPES,
}


GOLDEN = Path(__file__).parent / "golden" / "widget"
SAMPLE = """\
apiVersion: widgets.example.com/v1
kind: Widget
metadata:
  name: widget-sample
spec:
  replicas: 2
  maxReplicas: 3
"""


def write_widget(root: Path, project: bool = False) -> Path:
    """The package's files under `root` (with `project`, the generated CRD and a sample too); the path of
    widget_types.go."""
    files = dict(FILES)
    if project:
        files["config/crd/bases/widgets.example.com_widgets.yaml"] = (
            GOLDEN / "widgets.example.com_widgets.yaml"
        ).read_text()
        files["config/samples/widget.yaml"] = SAMPLE
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root / "api" / "v1" / "widget_types.go"
