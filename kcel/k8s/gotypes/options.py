"""The `crd` generator's options a project gives controller-gen (`controller-gen crd:generateEmbeddedObjectMeta=true
paths=./api/...`), read from the Makefile (and the `*.mk` files up to two folders below it) of the module, as
`make manifests` would pass them: the derived CRDs then match the ones the project commits.

Only the options that change a schema are kept (pkg/crd/gen.go's Generator fields): `generateEmbeddedObjectMeta`
(an embedded ObjectMeta gets name, namespace, labels, annotations and finalizers, known_types.go),
`allowDangerousTypes` (float32 and float64 become `number`, schema.go) and `maxDescLen` (descriptions cut at a
sentence or a word, desc_visitor.go).

Ported from kubernetes-sigs/controller-tools (Apache License 2.0, Copyright 2019 The Kubernetes Authors).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_INVOCATION = re.compile(r"controller-gen|\$[({]CONTROLLER_GEN[)}]", re.IGNORECASE)
MAX_MAKEFILE_BYTES = 1 << 20


@dataclass(frozen=True)
class GenerationOptions:
    """What `crd:...` asked of controller-gen."""

    embedded_object_meta: bool = False
    allow_dangerous_types: bool = False
    max_description_length: int | None = None  # maxDescLen
    paths: tuple[str, ...] = ()  # the invocation's `paths=` (relative to the Makefile's folder)


def parse_crd_argument(argument: str, paths: tuple[str, ...] = ()) -> GenerationOptions:
    """`crd:generateEmbeddedObjectMeta=true,maxDescLen=128` as options (a bare `name` is `name=true`, as
    controller-tools' marker arguments read a flag)."""
    values: dict[str, str] = {}
    for part in argument.partition(":")[2].split(","):
        name, _, value = part.partition("=")
        if name.strip():
            values[name.strip()] = value.strip().strip('"') or "true"
    length = values.get("maxDescLen", "")
    return GenerationOptions(values.get("generateEmbeddedObjectMeta") == "true",
                             values.get("allowDangerousTypes") == "true",
                             int(length) if re.fullmatch(r"-?[0-9]{1,9}", length) else None, paths)  # fmt: skip


def makefile_options(module_root: Path) -> list[GenerationOptions]:
    """Each `controller-gen ... crd...` invocation in the module's Makefile and `*.mk` files, in order."""
    found: list[GenerationOptions] = []
    files = [module_root / name for name in ("Makefile", "makefile", "GNUmakefile")]
    files += sorted(p for pattern in ("*.mk", "*/*.mk", "*/*/*.mk") for p in module_root.glob(pattern)
                    if not any(part.startswith(".") or part in ("vendor", "node_modules")
                               for part in p.relative_to(module_root).parts))  # fmt: skip
    for file in files:
        try:
            if not file.is_file() or file.stat().st_size > MAX_MAKEFILE_BYTES:
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.replace("\\\n", " ").splitlines():
            if not _INVOCATION.search(line):
                continue
            try:
                words = shlex.split(line, comments=False)
            except ValueError:
                words = line.split()
            crd = [w for w in words if w == "crd" or w.startswith("crd:")]
            if crd:
                paths = tuple(w.partition("=")[2] for w in words if w.startswith("paths="))
                found.append(parse_crd_argument(crd[0], paths))
    return found


def options_for(folder: Path, module_root: Path | None) -> GenerationOptions:
    """The options of the invocation whose `paths=` take in the folder (the first invocation when none names it),
    or controller-gen's defaults when the module has no Makefile that runs it."""
    if module_root is None:
        return GenerationOptions()
    invocations = makefile_options(module_root)
    for options in invocations:
        for given in options.paths:
            base = (module_root / given.removesuffix("...").rstrip("/")).resolve()
            if folder == base or (given.endswith("...") and folder.is_relative_to(base)):
                return options
    return invocations[0] if invocations else GenerationOptions()


# unicode.STerm (sentence terminals) and unicode.White_Space of Go's tables, as (first, last) code points
_STERM_RANGES = ((0x21, 0x21), (0x2E, 0x2E), (0x3F, 0x3F), (0x589, 0x589), (0x61D, 0x61F), (0x6D4, 0x6D4),
                 (0x700, 0x702), (0x7F9, 0x7F9), (0x837, 0x837), (0x839, 0x839), (0x83D, 0x83E), (0x964, 0x965),
                 (0x104A, 0x104B), (0x1362, 0x1362), (0x1367, 0x1368), (0x166E, 0x166E), (0x1735, 0x1736),
                 (0x1803, 0x1803), (0x1809, 0x1809), (0x1944, 0x1945), (0x1AA8, 0x1AAB), (0x1B5A, 0x1B5B),
                 (0x1B5E, 0x1B5F), (0x1C3B, 0x1C3C), (0x1C7E, 0x1C7F), (0x203C, 0x203D), (0x2047, 0x2049),
                 (0x2E2E, 0x2E2E), (0x2E3C, 0x2E3C), (0x3002, 0x3002), (0xA4FF, 0xA4FF), (0xA60E, 0xA60F),
                 (0xA6F3, 0xA6F3), (0xA6F7, 0xA6F7), (0xA876, 0xA877), (0xA8CE, 0xA8CF), (0xA92F, 0xA92F),
                 (0xA9C8, 0xA9C9), (0xAA5D, 0xAA5F), (0xAAF0, 0xAAF1), (0xABEB, 0xABEB), (0xFE52, 0xFE52),
                 (0xFE56, 0xFE57), (0xFF01, 0xFF01), (0xFF0E, 0xFF0E), (0xFF1F, 0xFF1F), (0xFF61, 0xFF61))  # fmt: skip
_WHITE_SPACE_RANGES = ((0x9, 0xD), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                       (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000))  # fmt: skip
_SENTENCE_TERMINALS = frozenset(chr(c) for first, last in _STERM_RANGES for c in range(first, last + 1))
_WHITE_SPACE = frozenset(chr(c) for first, last in _WHITE_SPACE_RANGES for c in range(first, last + 1))
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_SCHEMA_ONES = ("items", "additionalProperties", "additionalItems", "not")


def truncate_descriptions(schema: dict[str, Any], max_length: int) -> None:
    """TruncateDescription: every description of the schema and its subschemas cut to `max_length` bytes (at the
    last sentence end, else the last space and `...`); 0 removes them, a negative length keeps them."""
    if max_length < 0:
        return
    stack = [schema]
    while stack:
        node = stack.pop()
        description = node.get("description")
        if isinstance(description, str):
            if max_length == 0:
                node.pop("description")
            elif len(description.encode()) > max_length:
                node["description"] = _truncated(description, max_length)
        for key in _SCHEMA_MAPS:
            children = node.get(key)
            stack += [c for c in children.values() if isinstance(c, dict)] if isinstance(children, dict) else []
        for key in (*_SCHEMA_LISTS, *_SCHEMA_ONES):
            child = node.get(key)
            stack += [c for c in child if isinstance(c, dict)] if isinstance(child, list) else []
            stack += [child] if isinstance(child, dict) else []


def _truncated(description: str, max_length: int) -> str:
    """truncateString, on the UTF-8 bytes as Go slices a string."""
    cut = description.encode()[:max_length].decode(errors="ignore")
    sentence = max((i for i, c in enumerate(cut) if c in _SENTENCE_TERMINALS), default=0)
    if sentence > 0:
        return cut[: sentence + 1]
    space = max((i for i, c in enumerate(cut) if c in _WHITE_SPACE), default=0)
    return cut[:space] + "..." if space > 0 else cut + "..."
