"""The shape of the code base: stages import only earlier stages, no import cycles, no module over 800 lines,
and a lean core (`import kcel` loads no front end; `pip install kcel` pulls no webhook server)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kcel.webhook.command import SERVER_PACKAGES

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 800

# Packages in pipeline order: a module may import its own layer and the ones before it, never a later one.
LAYERS: tuple[tuple[str, ...], ...] = (
    # values and errors; Go's time, regexp and float formatting
    ("kcel.errors", "kcel.values", "kcel.temporal", "kcel.goregex", "kcel.gofloat", "kcel.colour"),
    ("kcel.parser",),
    ("kcel.checker",),  # with kcel.checker.decls, the row type of every library table
    ("kcel.eval",),
    ("kcel.cost",),
    ("kcel.libs",),
    ("kcel.proto",),  # protobuf messages (the kcel[protobuf] extra): Env(messages=...) imports it when asked
    ("kcel", "kcel.env", "kcel.k8s.environment"),  # Env(k8s_version=...) picks libraries by Kubernetes version
    ("kcel.k8s", "kcel.k8s.field"),
    ("kcel.k8s.schemas",),
    # Go files read with tree-sitter and their kubebuilder markers (kcel.annotations finds rules' markers with them)
    ("kcel.k8s.gotypes.syntax", "kcel.k8s.gotypes.markerargs", "kcel.k8s.gotypes.markers"),
    # manifests, their text; findings at files and lines; .kcel.yaml; answers compared across versions
    ("kcel.k8s.manifests", "kcel.findings", "kcel.annotations", "kcel.settings", "kcel.matrix"),
    ("kcel.k8s.authorization",),
    ("kcel.k8s.rules",),
    ("kcel.k8s.customresources",),
    ("kcel.k8s.crds",),
    ("kcel.k8s.gotypes",),  # Go API packages as the CRDs controller-gen derives from them
    ("kcel.k8s.patch",),  # JSON Patch and structured merge, typed by built-in, CRD or given schemas
    ("kcel.k8s.kustomize",),  # kustomization trees built: patches applied (with kcel.k8s.patch), traced to lines
    ("kcel.k8s.admission",),
    ("kcel.k8s.surfaces",),  # webhook matchConditions, DRA selectors, authentication and authorization config
    ("kcel.audit",),  # stored objects through new policies and CRDs
    ("kcel.suites",),
    ("kcel.repl",),
    ("kcel.webhook",),
    ("kcel.lsp",),  # the language server (the kcel[lsp] extra)
    ("kcel.cli", "kcel.completion", "kcel.commands"),  # the front end; kcel.commands: check, validate
)
LAZY_FRONT_ENDS = ("kcel.repl", "kcel.webhook", "kcel.lsp", "kcel.k8s.admission", "kcel.suites", "kcel.cli")


def _modules(package: str) -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """Every module of the project `name` imports: at the top, inside functions and under TYPE_CHECKING alike."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def _graph(package: str) -> dict[str, set[str]]:
    known = _modules(package)
    return {name: set(_imports(name, path, known)) for name, path in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return cycles


def _layer(module: str) -> int:
    """The index of the most specific layer entry naming the module or a package above it."""
    best, best_length = -1, -1
    for i, names in enumerate(LAYERS):
        for prefix in names:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = i, len(prefix)
    return best


@pytest.mark.parametrize("package", ["kcel", "conformance"])
def test_no_import_cycles(package: str) -> None:
    assert _cycles(_graph(package)) == []


def test_cycle_finder_finds_cycles() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_every_module_has_a_layer() -> None:
    assert [name for name in _modules("kcel") if _layer(name) < 0] == []


def test_stages_import_only_earlier_stages() -> None:
    late = [
        f"{name} imports {target}"
        for name, targets in _graph("kcel").items()
        for target in sorted(targets)
        if _layer(target) > _layer(name)
    ]
    assert late == []


def test_layers_tell_a_late_import() -> None:
    assert _layer("kcel.checker.checker") < _layer("kcel.libs.strings") < _layer("kcel.k8s.schemas.values")
    assert _layer("kcel.k8s.environment") < _layer("kcel.k8s.field") < _layer("kcel.k8s.admission.dispatch")


@pytest.mark.parametrize("package", ["kcel", "conformance"])
def test_no_module_over_the_line_limit(package: str) -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in _modules(package).items()}
    assert {name: lines for name, lines in sizes.items() if lines > MAX_LINES} == {}


def test_import_kcel_loads_no_front_end() -> None:
    code = "import sys, kcel; kcel.Env; print('\\n'.join(sorted(sys.modules)))"  # the engine, in use
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    modules = loaded.stdout.split()
    assert "kcel.env" in modules  # the probe sees kcel's modules
    front_ends = [m for m in modules if any(m == f or m.startswith(f + ".") for f in LAZY_FRONT_ENDS)]
    assert front_ends == []
    assert [m for m in modules if m.split(".")[0] in SERVER_PACKAGES] == []


def test_import_kcel_alone_loads_nothing_yet() -> None:
    """`import kcel` is cheap: the names come on first use (the command starts faster, Ctrl-C is caught sooner);
    only the few lines that catch a Ctrl-C while the `kcel` command starts come first."""
    code = "import sys, kcel; print('\\n'.join(m for m in sys.modules if m.startswith('kcel')))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert sorted(loaded.stdout.split()) == ["kcel", "kcel.interrupts"]


def test_core_install_has_no_webhook_server() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements: list[str]) -> set[str]:
        return {req.split(">")[0].split("[")[0].split("=")[0].strip().lower() for req in requirements}

    assert names(project["dependencies"]) & set(SERVER_PACKAGES) == set()
    assert names(project["optional-dependencies"]["serve"]) == set(SERVER_PACKAGES)
    assert "kcel[serve]" in project["optional-dependencies"]["test"]  # the tests run the server


def test_no_test_skips_because_kcel_cannot_be_imported() -> None:
    """A part of kcel that does not import is a failure, never a skipped module: `pytest.importorskip("kcel...")`
    once hid a broken policy engine behind "not in this tree yet"."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "importorskip" and node.args and isinstance(node.args[0], ast.Constant)
                    and str(node.args[0].value).split(".")[0] == "kcel"):  # fmt: skip
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_code_ported_from_go_ships_its_licence() -> None:
    """Go's pdqsort, replayed in kcel/libs/lists.py for cel-go's order of equal elements, is BSD-licensed: the
    notice ships inside the package (package data), and the port points at it."""
    from importlib.resources import files

    notice = files("kcel").joinpath("THIRD_PARTY_NOTICES.txt").read_text(encoding="utf-8")
    assert "Copyright 2009 The Go Authors." in notice and "_GoSorter" in notice
    assert "Redistributions of source code must retain the above copyright" in notice
    lists_source = files("kcel").joinpath("libs/lists.py").read_text(encoding="utf-8")
    assert "THIRD_PARTY_NOTICES.txt" in lists_source and "The Go Authors" in lists_source
