"""The shop fixture: a Go module written for kcel's tests (a kind per marker family, a nested module it
replaces, and a module cache of its own with small stand-ins for the apimachinery types controller-gen knows), kept
as text and written into a folder when the tests run. controller-gen v0.21.0's answer on it, the golden data, is in
tests/gotypes/golden/shop/."""

from __future__ import annotations

import shutil
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden" / "shop"

SOURCES: dict[str, str] = {
    "api/v1/groupversion_info.go": """\
// Package v1 contains the shop's API types, written for kcel's tests of Go types as CRDs.
// +kubebuilder:object:generate=true
// +groupName=shop.example.com
package v1
""",
    "api/v1/shop_types.go": """\
package v1

import (
	"example.com/colors"
	"example.com/local"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Size is a shirt size.
// +kubebuilder:validation:Enum=S;M;L;XL
type Size string

// Grade is how good a thing is.
// +k8s:enum
type Grade string

const (
	GradeGood Grade = "good"
	GradeBest Grade = "best"
	GradeOK   Grade = `ok`
)

// Labels is a name's labels.
type Labels map[string]string

// Nickname is another word for Size.
type Nickname = Size

// Item is one thing on sale.
// +kubebuilder:validation:XValidation:rule="self.price >= 0 || self.free",message="a price is not negative"
type Item struct {
	// Name names the item.
	//
	// It is unique in a shop.
	// TODO: say more.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]*$`
	Name string `json:"name"`

	// +kubebuilder:validation:Minimum=-5
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:MultipleOf=5
	Price int64 `json:"price"`

	// +optional
	Free bool `json:"free,omitempty"`

	// +kubebuilder:default=M
	Size Size `json:"size,omitempty"`

	// +optional
	Grade Grade `json:"grade,omitempty"`

	// +optional
	Color colors.Color `json:"color,omitempty"`

	// Tags of the item.
	// +listType=set
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:items:MaxLength=12
	// +optional
	Tags []string `json:"tags,omitempty"`

	// Picture is the item's image.
	// +optional
	Picture []byte `json:"picture,omitempty"`

	// +kubebuilder:validation:Format=uri
	// +optional
	Link string `json:"link,omitempty"`
}

// Schedule is when the shop opens.
type Schedule struct {
	// +kubebuilder:validation:XValidation:rule="self.end - self.start <= 12",message="at most twelve hours"
	Hours local.Window `json:"hours"`

	// +optional
	Every *metav1.Duration `json:"every,omitempty"`

	// +optional
	Since metav1.Time `json:"since,omitempty"`

	// +optional
	Precise *metav1.MicroTime `json:"precise,omitempty"`
}

// ShopSpec is what a shop should be.
// +kubebuilder:validation:XValidation:rule="!has(self.discount) || self.discount <= 50",message="discount too high",reason=FieldValueForbidden,fieldPath=".discount"
// +kubebuilder:validation:XValidation:rule="self.items.all(i, i.size != 'XL') || self.big",messageExpression="'no XL in ' + self.title"
type ShopSpec struct {
	// Title is what the sign says.
	// +kubebuilder:validation:XValidation:rule="self == self.trim()",message="no spaces around"
	// +kubebuilder:validation:XValidation:rule="self != 'closed'",optionalOldSelf=true
	Title string `json:"title"`

	// +optional
	Big bool `json:"big,omitempty"`

	// Items on sale.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:MinItems=0
	Items []Item `json:"items"`

	// +optional
	// +kubebuilder:validation:Minimum=0
	Discount *int32 `json:"discount,omitempty"`

	// Capacity in square metres.
	Capacity resource.Quantity `json:"capacity"`

	// +optional
	Port intstr.IntOrString `json:"port,omitempty"`

	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XIntOrString
	// +optional
	Floor *intstr.IntOrString `json:"floor,omitempty"`

	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	// +optional
	Template runtime.RawExtension `json:"template,omitempty"`

	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Extra map[string]string `json:"extra,omitempty"`

	// +mapType=atomic
	// +kubebuilder:validation:MaxProperties=10
	// +kubebuilder:validation:MinProperties=1
	// +optional
	Labels Labels `json:"labels,omitempty"`

	// +kubebuilder:default={"open": "9", "close": "17"}
	// +optional
	Defaults map[string]string `json:"defaults,omitempty"`

	// +nullable
	// +optional
	Schedule *Schedule `json:"schedule,omitempty"`

	// +optional
	Palette colors.Palette `json:"palette,omitempty"`

	// +optional
	Nick Nickname `json:"nick,omitempty"`

	// +kubebuilder:title=Owner
	// +kubebuilder:example=alice
	// +kubebuilder:validation:Required
	Owner string `json:"owner,omitempty"`

	// +kubebuilder:validation:Optional
	Notes string `json:"notes"`

	// +k8s:optional
	// +k8s:immutable
	Code string `json:"code,omitempty"`

	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`

	Ignored string `json:"-"`

	CommonFields `json:",inline"`
}

// CommonFields are shared by several specs.
type CommonFields struct {
	// Region the shop is in.
	// +kubebuilder:default=eu
	Region string `json:"region,omitempty"`
}

// ShopStatus is what a shop is.
type ShopStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.big,statuspath=.status.size
// +kubebuilder:resource:path=shops,shortName={sh,shp},categories=retail,scope=Namespaced
// +kubebuilder:printcolumn:name="Title",type=string,JSONPath=`.spec.title`,description="the sign"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",priority=1

// Shop is a place that sells things.
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 30",message="name too long"
type Shop struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ShopSpec `json:"spec"`
	// +optional
	Status ShopStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ShopList is a list of shops.
type ShopList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Shop `json:"items"`
}

// Policy is a cluster-wide rule for shops, with an irregular plural.
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:deprecatedversion:warning="use v2"
type Policy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self.all(k, k.startsWith('x-'))",message="keys start with x-"
	// +optional
	Rules map[string]string `json:"rules,omitempty"`
}
""",
    "go.mod": """\
module example.com/shop

go 1.24

require (
	example.com/colors v1.2.0
	example.com/local v0.0.0
	k8s.io/apimachinery v0.36.3
)

replace example.com/local => ./local
""",
    "gomodcache/cache/download/example.com/colors/@v/list": """\
v1.2.0
""",
    "gomodcache/cache/download/example.com/colors/@v/v1.2.0.info": """\
{"Version":"v1.2.0","Time":"2000-01-01T00:00:00Z"}""",
    "gomodcache/cache/download/example.com/colors/@v/v1.2.0.mod": """\
module example.com/colors

go 1.24
""",
    "gomodcache/cache/download/example.com/colors/@v/v1.2.0.ziphash": """\
h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
""",
    "gomodcache/cache/download/k8s.io/apimachinery/@v/list": """\
v0.36.3
""",
    "gomodcache/cache/download/k8s.io/apimachinery/@v/v0.36.3.info": """\
{"Version":"v0.36.3","Time":"2000-01-01T00:00:00Z"}""",
    "gomodcache/cache/download/k8s.io/apimachinery/@v/v0.36.3.mod": """\
module k8s.io/apimachinery

go 1.24
""",
    "gomodcache/cache/download/k8s.io/apimachinery/@v/v0.36.3.ziphash": """\
h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=
""",
    "gomodcache/cache/lock": "",
    "gomodcache/example.com/colors@v1.2.0/colors.go": """\
// Package colors is a module in the fixture's module cache: a type imported from outside the project.
package colors

// Color is a color's name.
// +kubebuilder:validation:Enum=red;green;blue
type Color string

// Palette is a few colors, each once.
// +kubebuilder:validation:MaxItems=8
// +listType=set
type Palette []Color
""",
    "gomodcache/example.com/colors@v1.2.0/go.mod": """\
module example.com/colors

go 1.24
""",
    "gomodcache/k8s.io/apimachinery@v0.36.3/go.mod": """\
module k8s.io/apimachinery

go 1.24
""",
    "gomodcache/k8s.io/apimachinery@v0.36.3/pkg/api/resource/quantity.go": """\
// Package resource is a stand-in for k8s.io/apimachinery's resource package, for kcel's tests.
package resource

// Quantity is an amount with a unit suffix (a stand-in).
type Quantity struct {
	s string
}

// MarshalJSON writes the quantity as JSON.
func (q Quantity) MarshalJSON() ([]byte, error) { return []byte(q.s), nil }
""",
    "gomodcache/k8s.io/apimachinery@v0.36.3/pkg/apis/meta/v1/types.go": """\
// Package v1 is a small stand-in for k8s.io/apimachinery's meta/v1, written for kcel's tests: the types
// controller-gen treats specially and two it reads from source.
package v1

// TypeMeta names an object's kind and API version (a stand-in).
type TypeMeta struct {
	// Kind names the type of the object.
	// +optional
	Kind string `json:"kind,omitempty"`

	// APIVersion names the group and version of the object's schema.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
}

// ObjectMeta holds an object's name, namespace and labels (a stand-in).
type ObjectMeta struct {
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// ListMeta holds a list's metadata (a stand-in).
type ListMeta struct {
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// Time is an instant written as RFC 3339 text (a stand-in).
type Time struct {
	Seconds int64 `json:"-"`
}

// MarshalJSON writes the time as JSON.
func (t Time) MarshalJSON() ([]byte, error) { return nil, nil }

// MicroTime is an instant to the microsecond (a stand-in).
type MicroTime struct {
	Seconds int64 `json:"-"`
}

// Duration is a span of time written as Go duration text (a stand-in).
type Duration struct {
	Nanoseconds int64 `json:"-"`
}

// Condition reports one aspect of an object's state (a stand-in).
type Condition struct {
	// type names the condition.
	// +required
	// +kubebuilder:validation:MaxLength=316
	Type string `json:"type"`
	// status says whether the condition holds.
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status string `json:"status"`
	// lastTransitionTime is when status last changed.
	LastTransitionTime Time `json:"lastTransitionTime"`
}

// LabelSelector selects objects by their labels (a stand-in).
// +structType=atomic
type LabelSelector struct {
	// matchLabels lists labels an object must carry.
	// +optional
	MatchLabels map[string]string `json:"matchLabels,omitempty"`
}
""",
    "gomodcache/k8s.io/apimachinery@v0.36.3/pkg/runtime/types.go": """\
// Package runtime is a stand-in for k8s.io/apimachinery's runtime package, for kcel's tests.
package runtime

// RawExtension holds an embedded object of any kind (a stand-in).
type RawExtension struct {
	Raw []byte `json:"-"`
}
""",
    "gomodcache/k8s.io/apimachinery@v0.36.3/pkg/util/intstr/intstr.go": """\
// Package intstr is a stand-in for k8s.io/apimachinery's intstr package, for kcel's tests.
package intstr

// IntOrString holds either a number or a text (a stand-in).
type IntOrString struct {
	Type   int    `json:"-"`
	IntVal int32  `json:"-"`
	StrVal string `json:"-"`
}
""",
    "local/go.mod": """\
module example.com/local

go 1.24
""",
    "local/local.go": """\
// Package local is a nested module the project replaces with its own folder.
package local

// Window is a span of hours.
// +kubebuilder:validation:XValidation:rule="self.start < self.end",message="a window starts before it ends"
type Window struct {
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=23
	Start int32 `json:"start"`
	// +kubebuilder:validation:Maximum=24
	End int32 `json:"end"`
}
""",
}


def write_shop(root: Path) -> Path:
    """The fixture's files under `root`, with controller-gen's answer in `out/` beside them, as it wrote them."""
    for name, text in SOURCES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    shutil.copytree(GOLDEN, root / "out")
    return root
