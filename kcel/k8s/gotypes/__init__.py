"""Go API packages as CRDs: the CustomResourceDefinitions controller-gen (kubernetes-sigs/controller-tools,
`controller-gen crd`) would write from Go types and their kubebuilder markers, with where each rule came from.

The stages, each handing frozen dataclasses to the next:
`syntax` reads a Go file with tree-sitter (types, fields, tags, comments); `markers` finds the marker comments of
each type, field and package as controller-tools' collector does and parses them with its grammar; `packages`
finds the Go files of an import path (the module, `vendor/`, the module cache); `schemas` turns types into
OpenAPI v3 schemas (pkg/crd/schema.go, known_types.go, markers/*.go); `flatten` inlines references and merges
`allOf` (pkg/crd/flatten.go); `derive` assembles each CRD (pkg/crd/spec.go, markers/crd.go) and its source map.

`syntax` and `markers` depend on nothing of kcel's (kcel.annotations reads markers with them); the rest come
after the CRD reader. This file imports nothing, so that reading markers loads no schema code.
"""
