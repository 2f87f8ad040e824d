"""A kind's default plural, as controller-gen takes it from gobuffalo/flect's Pluralize, for the common English
endings (`Policy` -> `policies`, `Ingress` -> `ingress` unchanged as flect leaves words ending in s, `Box` ->
`boxes`); a project with an irregular kind names its plural with `+kubebuilder:resource:path=`."""

from __future__ import annotations

_IRREGULAR = {"person": "people", "child": "children", "man": "men", "woman": "women", "mouse": "mice",
              "goose": "geese", "ox": "oxen", "quiz": "quizzes", "index": "indices", "matrix": "matrices",
              "vertex": "vertices", "axis": "axes", "analysis": "analyses", "basis": "bases", "crisis": "crises",
              "status": "statuses", "alias": "aliases", "bus": "buses", "process": "processes",
              "address": "addresses", "access": "accesses", "class": "classes", "pass": "passes",
              "policy": "policies", "proxy": "proxies", "leaf": "leaves", "life": "lives", "wife": "wives",
              "knife": "knives", "half": "halves", "self": "selves", "shelf": "shelves", "datum": "data",
              "medium": "media", "criterion": "criteria", "phenomenon": "phenomena"}  # fmt: skip
_UNCHANGED = {"aircraft", "bison", "chassis", "deer", "fish", "moose", "police", "salmon", "series", "sheep",
              "shrimp", "species", "swine", "trout", "tuna", "equipment", "information", "metadata", "news",
              "data", "rice", "money", "software", "hardware", "feedback", "staff", "traffic"}  # fmt: skip


def plural_of(kind: str) -> str:
    """The plural of a kind's name (the case of the first letter kept; controller-gen lowers it after)."""
    lower = kind.lower()
    for singular, plural in _IRREGULAR.items():
        if lower.endswith(singular) and (lower == singular or kind[len(kind) - len(singular)].isupper()):
            return kind[: len(kind) - len(singular)] + (plural.capitalize() if kind[-len(singular)].isupper()
                                                         else plural)  # fmt: skip
    if lower in _UNCHANGED or lower.endswith("s") and not lower.endswith(("ss", "us", "is")):
        return kind
    if lower.endswith(("ss", "sh", "ch", "x", "z")):
        return kind + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return kind[:-1] + "ies"
    if lower.endswith(("us", "is")):
        return kind + "es"
    return kind + "s"
