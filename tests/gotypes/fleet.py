"""The fleet fixture: a Go module whose Makefile runs controller-gen with the `crd` options that change schemas
(`generateEmbeddedObjectMeta`, `maxDescLen`, `allowDangerousTypes`), written for kcel's tests; it reuses the shop
fixture's module cache (tests/gotypes/shop.py). controller-gen v0.21.0's answer, run as the Makefile runs it, is in
tests/gotypes/golden/fleet/."""

from __future__ import annotations

import shutil
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden" / "fleet"

SOURCES: dict[str, str] = {
    "Makefile": """\
CONTROLLER_GEN ?= controller-gen

.PHONY: manifests
manifests:
	$(CONTROLLER_GEN) rbac:roleName=manager-role \\
		"crd:generateEmbeddedObjectMeta=true,maxDescLen=60,allowDangerousTypes=true" \\
		paths="./api/..." output:crd:artifacts:config=config/crd
""",
    "go.mod": """\
module example.com/fleet

go 1.24

require k8s.io/apimachinery v0.36.3
""",
    "api/v1/groupversion_info.go": """\
// Package v1 holds the fleet's API types, written for kcel's tests of controller-gen's crd options.
// +kubebuilder:object:generate=true
// +groupName=fleet.example.com
package v1
""",
    "api/v1/fleet_types.go": """\
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ShipTemplate is what each ship of the fleet is made from. Its metadata is kept with the template, so that a
// rule can read the name every ship will get. A second sentence makes the description long.
type ShipTemplate struct {
	// metadata of the ships made from the template.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Hull is the kind of hull, a word that says which shipyard builds it and how heavy it is
	Hull string `json:"hull"`
}

// FleetSpec says how many ships sail and how they are made.
type FleetSpec struct {
	// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 20",message="ship names are short"
	// +kubebuilder:validation:XValidation:rule="!has(self.metadata.namespace)",message="ships have no namespace"
	Template ShipTemplate `json:"template"`

	// Ratio of sails to masts; a float, which only allowDangerousTypes lets controller-gen write.
	// +kubebuilder:validation:XValidation:rule="self < 4.5",message="too many sails"
	Ratio float64 `json:"ratio"`

	// Ships is the number of ships: an integer between zero and one hundred, with no unit and no fraction at all.
	// +kubebuilder:validation:Maximum=100
	Ships int32 `json:"ships"`
}

// Fleet is a group of ships.
// +kubebuilder:object:root=true
type Fleet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec FleetSpec `json:"spec"`
}

// FleetList is a list of fleets.
// +kubebuilder:object:root=true
type FleetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Fleet `json:"items"`
}
""",
}


def write_fleet(root: Path) -> Path:
    """The fixture's files under `root` (its imports resolve from the shop's module cache), controller-gen's answer
    in `out/`."""
    for name, text in SOURCES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    shutil.copytree(GOLDEN, root / "out")
    return root
