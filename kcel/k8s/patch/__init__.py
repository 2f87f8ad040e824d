"""Changing objects as the API server does: JSON Patch (RFC 6902, evanphx/json-patch v4 as Kubernetes vendors it)
and server-side-apply merges typed by OpenAPI schemas (sigs.k8s.io/structured-merge-diff)."""
