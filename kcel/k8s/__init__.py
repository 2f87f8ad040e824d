"""Kubernetes: one subpackage per part of the API server, in the order a request flows through it.

`environment` (the base CEL environment by version) and `field` (field errors) serve them all; then
`schemas` (OpenAPI schemas as CEL types), `manifests` (reading request bodies), `authorization` (RBAC),
`rules` (CRD validation rules and their cost), `customresources` (a custom-resource request: decode,
prune, default, validate), `crds` (CRDs and their create checks) and `admission` (admission policies).
"""
