"""A custom-resource request, in the API server's order: decode, prune, default, then validate (metadata,
OpenAPI schema with its formats, list types, and the CRD's CEL rules)."""
