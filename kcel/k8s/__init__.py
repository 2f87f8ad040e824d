"""Kubernetes integration: the base CEL environment, authorizers, CRD validation."""
