"""Go packages found as `go list` finds them, offline: an import path is in the importing module itself, in a
`replace`d folder, in `vendor/`, or in the module cache at the version go.mod requires (GOMODCACHE, else
GOPATH/pkg/mod, else ~/go/pkg/mod; capitals escaped as `!x`). Nested modules are modules of their own.

Each package is its folder's `.go` files (not `_test.go`, not `//go:build ignore`), read once per process; an
editor's unsaved texts (`sources`) stand in for the files they are of, and a package holding one is read again
each time its texts change (the last few kept).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from kcel.k8s.gotypes.markers import FileMarkers, file_markers
from kcel.k8s.gotypes.syntax import GoFile, GoSyntaxError, TypeSpec, parse_go

MAX_PACKAGE_FILES = 2000  # a folder of more Go files than this is no API package: stop rather than read it all


@dataclass(frozen=True)
class Module:
    """A go.mod: the module's path, its folder, what it requires and what it replaces."""

    path: str
    root: Path
    requires: tuple[tuple[str, str], ...]  # (module path, version)
    replaces: tuple[tuple[str, str, str, str], ...]  # (old path, old version or "", new path, new version or "")


@dataclass(frozen=True)
class Declared:
    """A type declared in a package: its spec, the file it is in, and that file's markers."""

    spec: TypeSpec
    file: GoFile
    markers: FileMarkers


@dataclass(frozen=True)
class Package:
    """One Go package: its import path, folder, name, files and the module it belongs to."""

    path: str
    folder: Path
    name: str
    files: tuple[GoFile, ...]
    markers: tuple[FileMarkers, ...]
    module: Module | None  # whose go.mod resolves its imports (the main module's, for a vendored package)
    main: Module | None = None  # the module of the packages asked for, tried when `module` cannot resolve one
    types: dict[str, Declared] = field(default_factory=dict, repr=False)

    def imports_of(self, go: GoFile) -> dict[str, str]:
        return {name: path for name, path in go.imports if name}


def read_go_mod(path: Path) -> Module:
    """A go.mod's module path, requirements and replaces (comments and blocks read as the go command does)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    module, requires, replaces, block = "", [], [], ""
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if block:
            if line == ")":
                block = ""
                continue
            words = [block, *line.split()]
        else:
            words = line.split()
            if len(words) == 2 and words[1] == "(":
                block = words[0]
                continue
        verb, args = words[0], [_unquote(w) for w in words[1:]]
        if verb == "module" and args:
            module = args[0]
        elif verb == "require" and len(args) >= 2:
            requires.append((args[0], args[1]))
        elif verb == "replace" and "=>" in args:
            arrow = args.index("=>")
            old, new = args[:arrow], args[arrow + 1 :]
            if old and new:
                replaces.append((old[0], old[1] if len(old) > 1 else "", new[0], new[1] if len(new) > 1 else ""))
    return Module(module, path.parent, tuple(requires), tuple(replaces))


def _unquote(word: str) -> str:
    return word[1:-1] if len(word) >= 2 and word[0] == word[-1] and word[0] in '"`' else word


def module_of(folder: Path) -> Module | None:
    """The module a folder is in: the nearest go.mod at or above it."""
    for candidate in (folder, *folder.parents):
        if (candidate / "go.mod").is_file():
            return _module(candidate / "go.mod")
    return None


@cache
def _module(go_mod: Path) -> Module:
    return read_go_mod(go_mod)


def escape_module_path(path: str) -> str:
    """The module cache's spelling of a module path: a capital letter is `!` and its lower case."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in path)


@cache
def module_cache() -> Path:
    """GOMODCACHE, else the first GOPATH's pkg/mod, else `go env GOPATH`'s, else ~/go/pkg/mod."""
    if os.environ.get("GOMODCACHE"):
        return Path(os.environ["GOMODCACHE"])
    gopath = os.environ.get("GOPATH", "").split(os.pathsep)[0]
    if not gopath and shutil.which("go"):
        try:
            gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True, timeout=10,
                                    check=False).stdout.strip().split(os.pathsep)[0]  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            gopath = ""
    return Path(gopath or Path.home() / "go") / "pkg" / "mod"


def _within(path: str, module: str) -> str | None:
    """The rest of an import path inside a module path ("" for the module's own package), or None."""
    if path == module:
        return ""
    return path[len(module) + 1 :] if path.startswith(module + "/") else None


def resolve(import_path: str, module: Module | None) -> Path | None:
    """The folder of an import path seen from a module, as the go command would pick it; None when not found."""
    if module is None:
        return None
    rest = _within(import_path, module.path)
    if rest is not None:
        return module.root / rest
    for old, _old_version, new, new_version in sorted(module.replaces, key=lambda r: -len(r[0])):
        rest = _within(import_path, old)
        if rest is None:
            continue
        if new.startswith((".", "/")) or new_version == "":
            folder = (module.root / new).resolve() if not Path(new).is_absolute() else Path(new)
            return folder / rest if folder.is_dir() else None
        return _cached(new, new_version, rest)
    vendored = module.root / "vendor" / import_path
    if vendored.is_dir():
        return vendored
    best = max((r for r in module.requires if _within(import_path, r[0]) is not None), key=lambda r: len(r[0]),
               default=None)  # fmt: skip
    if best is None:
        return None
    rest = _within(import_path, best[0]) or ""
    return _cached(best[0], best[1], rest)


def _cached(module_path: str, version: str, rest: str) -> Path | None:
    folder = module_cache() / f"{escape_module_path(module_path)}@{escape_module_path(version)}" / rest
    return folder if folder.is_dir() else None


class PackageError(ValueError):
    """A folder that cannot be read as a Go package (the message names it)."""


def load_package(folder: Path, import_path: str = "", main: Module | None = None,
                 sources: Mapping[Path, str] | None = None) -> Package | None:  # fmt: skip
    """The Go package in a folder (None when it holds no Go file); its import path from its module when not
    given. `sources`: texts to read instead of files (by resolved path: an editor's unsaved buffers).

    Raises:
        PackageError: a file that is not Go, or too many files.
        GoSyntaxError: tree-sitter-go is not installed.
    """
    folder = folder.resolve()
    edited = tuple(sorted((path, text) for path, text in (sources or {}).items() if path.parent == folder))
    return _load_edited(folder, import_path, main, edited) if edited else _load(folder, import_path, main)


@cache
def _load(folder: Path, import_path: str, main: Module | None) -> Package | None:
    return _read(folder, import_path, main, ())


@lru_cache(maxsize=8)  # a package being edited: a new entry each keystroke, so only the last few are kept
def _load_edited(folder: Path, import_path: str, main: Module | None,
                 overlay: tuple[tuple[Path, str], ...]) -> Package | None:  # fmt: skip
    return _read(folder, import_path, main, overlay)


def _read(folder: Path, import_path: str, main: Module | None,
          overlay: tuple[tuple[Path, str], ...]) -> Package | None:  # fmt: skip
    edited = dict(overlay)
    try:
        names = sorted({*(p for p in folder.iterdir() if p.suffix == ".go"), *edited} - {
            p for p in edited if not p.name.endswith(".go")})  # fmt: skip
    except OSError:
        return None
    names = [p for p in names if not p.name.endswith("_test.go")]
    if len(names) > MAX_PACKAGE_FILES:
        raise PackageError(f"{folder}: more than {MAX_PACKAGE_FILES} Go files, not read as an API package")
    files, markers = [], []
    for path in names:
        try:
            text = edited[path] if path in edited else path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise PackageError(f"{path}: cannot read: {err}") from None
        try:
            go = _parsed(text, shown_path(path))
        except GoSyntaxError as err:
            if "kcel[go]" in str(err):
                raise
            raise PackageError(str(err)) from None
        if go.build_ignored:
            continue
        files.append(go)
        markers.append(file_markers(go))
    if not files:
        return None
    module = module_of(folder)
    if main is not None and folder.is_relative_to(main.root / "vendor"):
        module = main
    if not import_path and module is not None:
        relative = folder.relative_to(module.root).as_posix() if folder.is_relative_to(module.root) else ""
        import_path = module.path + ("/" + relative if relative and relative != "." else "")
    package = Package(import_path, folder, files[0].package, tuple(files), tuple(markers), module, main or module)
    for go, found in zip(files, markers, strict=True):
        for spec in go.types:
            package.types.setdefault(spec.name, Declared(spec, go, found))
    return package


@lru_cache(maxsize=256)  # the files beside the one being edited are parsed once, not at each keystroke
def _parsed(text: str, shown: str) -> GoFile:
    return parse_go(text, shown)


def shown_path(path: Path) -> str:
    """A file's name as findings show it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def import_package(import_path: str, importer: Package, sources: Mapping[Path, str] | None = None) -> Package | None:
    """The package an import path names, from the importing package's module (then the main module's), its
    files' unsaved texts from `sources`."""
    folder = resolve(import_path, importer.module)
    if folder is None and importer.main is not importer.module:
        folder = resolve(import_path, importer.main)
    return load_package(folder, import_path, importer.main, sources) if folder is not None else None
