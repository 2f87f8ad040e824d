"""Conformance runners: the cel-spec suite (and, later, Kubernetes' own test tables) through kcel."""
