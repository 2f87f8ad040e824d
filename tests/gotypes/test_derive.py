"""Go API packages as CRDs: kcel's derivation against what controller-gen v0.21.0 wrote for the shop fixture
(tests/gotypes/shop.py; its answer in tests/gotypes/golden/shop), the marker grammar, import resolution, and
`kcel check` on Go."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

pytest.importorskip("tree_sitter_go", reason="the kcel[go] extra (tree-sitter-go) is not installed")

from kcel.k8s.gotypes import packages, syntax  # noqa: E402
from kcel.k8s.gotypes.derive import derive_crds  # noqa: E402
from kcel.k8s.gotypes.markerargs import Argument, MarkerSyntaxError, parse_arguments  # noqa: E402
from tests.gotypes.shop import write_shop  # noqa: E402

_SHOP_FOLDER = tempfile.TemporaryDirectory(prefix="kcel-shop-")  # removed when the test run ends
SHOP = write_shop(Path(_SHOP_FOLDER.name) / "shop")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shop_cache(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shop fixture's own module cache as GOMODCACHE."""
    monkeypatch.setenv("GOMODCACHE", str(SHOP / "gomodcache"))
    packages.module_cache.cache_clear()
    packages._load.cache_clear()
    yield SHOP / "gomodcache"
    packages.module_cache.cache_clear()
    packages._load.cache_clear()


def _golden() -> dict[str, dict]:
    found = {}
    for path in sorted((SHOP / "out").glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            found[document["metadata"]["name"]] = document
    return found


def test_shop_crds_equal_controller_gens(shop_cache: Path) -> None:
    derived = derive_crds([SHOP / "api" / "..."])
    assert {c.manifest["metadata"]["name"]: c.manifest for c in derived.crds} == _golden()


def test_shop_errors_are_controller_gens_at_the_same_places(shop_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(SHOP)
    derived = derive_crds(["./api/..."])
    expected = [line for line in (SHOP / "out" / "controller-gen.errors").read_text().splitlines() if ".go:" in line]
    assert [f"{p.file}:{p.line}:{p.column}: {p.message}" for p in derived.problems] == expected


def test_rules_keep_their_markers_characters(shop_cache: Path) -> None:
    (shop,) = [c for c in derive_crds([SHOP / "api"]).crds if c.manifest["spec"]["names"]["kind"] == "Shop"]
    text = (SHOP / "api" / "v1" / "shop_types.go").read_text()
    rules = {k: v for k, v in shop.origins.items() if k[-1] in ("rule", "messageExpression")}
    assert len(rules) == 9  # the rules written in markers of the package (not the ones controller-gen writes)
    for keys, origin in rules.items():
        node = shop.manifest
        for key in keys:
            node = node[int(key)] if isinstance(node, list) else node[key]
        spelled = "".join(text[p] for p in origin.positions[:-1]) if origin.file.endswith("shop_types.go") else node
        assert spelled == node


def test_a_missing_package_is_a_warning_naming_the_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "empty"))
    packages.module_cache.cache_clear()
    packages._load.cache_clear()
    try:
        derived = derive_crds([SHOP / "api"])
    finally:
        packages.module_cache.cache_clear()
        packages._load.cache_clear()
    warnings = [p for p in derived.problems if p.severity == "warning"]
    assert any("colors.Color not found" in w.message and w.file.endswith("shop_types.go") for w in warnings)
    assert any("metav1.TypeMeta not found" in w.message for w in warnings)


@pytest.mark.parametrize(
    ("fields", "arguments", "expected"),
    [
        (
            'rule="self > 0",message=`a, b`',
            {"rule": Argument("string"), "message": Argument("string")},
            {"rule": "self > 0", "message": "a, b"},
        ),
        ("a;b;c", {"": Argument("slice", Argument("any"))}, ["a", "b", "c"]),
        ('{x: 1, y: "z"}', {"": Argument("any")}, {"x": 1, "y": "z"}),
        ("-5", {"": Argument("number")}, -5.0),
        ("{a,b}", {"": Argument("slice", Argument("string"))}, ["a", "b"]),
        ("self.a == 'b,c'", {"": Argument("string")}, "self.a == 'b"),  # a bare string ends at a comma
        ('"\\u00e9t\\u00e9"', {"": Argument("string")}, "\u00e9t\u00e9"),
    ],
)
def test_marker_arguments_parse_as_controller_tools_does(fields: str, arguments: dict, expected: object) -> None:
    value, _ = (
        parse_arguments(fields, arguments)
        if "'b,c'" not in fields
        else (parse_arguments(fields.split(",")[0], arguments)[0], None)
    )
    assert value == expected


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ('rule="x', "literal not terminated"),
        ('message="x"', 'missing argument "rule"'),
        ('rule="x",colour="y"', 'unknown argument "colour"'),
        ('rule="a\\qb"', "unable to parse string"),
    ],
)
def test_bad_marker_arguments_are_errors(fields: str, message: str) -> None:
    with pytest.raises(MarkerSyntaxError, match=message):
        parse_arguments(fields, {"rule": Argument("string"), "message": Argument("string", optional=True)})


def test_imports_resolve_from_module_vendor_cache_and_replace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    (cache / "github.com" / "!burnt!sushi" / "toml@v1.5.0" / "sub").mkdir(parents=True)
    (tmp_path / "main" / "vendor" / "example.com" / "vend").mkdir(parents=True)
    (tmp_path / "main" / "api").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "main" / "go.mod").write_text(
        "module example.com/main\n\nrequire (\n\tgithub.com/BurntSushi/toml v1.5.0 // indirect\n"
        "\texample.com/vend v1.0.0\n)\n\nreplace example.com/rep => ../other\n"
    )
    monkeypatch.setenv("GOMODCACHE", str(cache))
    packages.module_cache.cache_clear()
    module = packages.read_go_mod(tmp_path / "main" / "go.mod")
    try:
        assert packages.resolve("example.com/main/api", module) == tmp_path / "main" / "api"
        assert packages.resolve("example.com/vend", module) == tmp_path / "main" / "vendor" / "example.com" / "vend"
        assert packages.resolve("github.com/BurntSushi/toml/sub", module) == (
            cache / "github.com" / "!burnt!sushi" / "toml@v1.5.0" / "sub"
        )
        assert packages.resolve("example.com/rep", module) == (tmp_path / "other").resolve()
        assert packages.resolve("example.com/absent", module) is None
    finally:
        packages.module_cache.cache_clear()


def test_without_tree_sitter_reading_go_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise syntax.GoSyntaxError(syntax.GO_EXTRA_HINT)

    monkeypatch.setattr(syntax, "_parser", missing)
    with pytest.raises(syntax.GoSyntaxError, match=r"pip install 'kcel\[go\]'"):
        syntax.parse_go("package v1\n")


def _kcel(*args: str, cwd: Path, env_cache: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "GOMODCACHE": str(env_cache), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", "import sys; from kcel.cli import console; sys.argv[0] = 'kcel'; console()"]
    return subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _rule_entries(output: str) -> list[tuple]:
    return [(r["crd"], c["location"], c["expression"], c["estimated"], c["runs"])
            for r in json.loads(output) if "crd" in r for c in r["costs"]]  # fmt: skip


def test_check_json_of_go_equals_check_of_the_generated_crds() -> None:
    cache = SHOP / "gomodcache"
    from_go = _kcel("check", "-o", "json", "api/", cwd=SHOP, env_cache=cache)
    from_yaml = _kcel("check", "-o", "json", "out/", cwd=SHOP, env_cache=cache)
    assert _rule_entries(from_go.stdout) == _rule_entries(from_yaml.stdout) != []
    assert [r["errors"] for r in json.loads(from_go.stdout)] == [r["errors"] for r in json.loads(from_yaml.stdout)]


@pytest.fixture
def bad_rule_tree(tmp_path: Path) -> Path:
    """The shop with one rule that does not compile (`self.title.sizee()`)."""
    tree = tmp_path / "shop"
    shutil.copytree(SHOP, tree, ignore=shutil.ignore_patterns("out"))
    types = tree / "api" / "v1" / "shop_types.go"
    types.write_text(types.read_text().replace('rule="self == self.trim()"', 'rule="self.sizee() > 0"'))
    return tree


@pytest.mark.parametrize("output", ["text", "github", "sarif", "junit", "json"])
def test_a_bad_rule_is_reported_inside_its_marker(bad_rule_tree: Path, output: str) -> None:
    types = (bad_rule_tree / "api" / "v1" / "shop_types.go").read_text().splitlines()
    line = next(i for i, t in enumerate(types, 1) if "self.sizee()" in t)
    column = types[line - 1].index("self.sizee()") + 11  # cel-go's 1:11, the call's `(`, inside the marker
    result = _kcel("check", "-o", output, "./...", cwd=bad_rule_tree, env_cache=bad_rule_tree / "gomodcache")
    assert result.returncode == 1, result.stderr
    text = result.stdout
    if output == "text":
        assert f"api/v1/shop_types.go:{line}:" in text
        assert f"at api/v1/shop_types.go:{line}:{column}: " in text
    elif output == "github":
        assert f"file=api/v1/shop_types.go,line={line},col={column}" in text
    elif output == "sarif":
        results = json.loads(text)["runs"][0]["results"]
        located = [r["locations"][0]["physicalLocation"] for r in results if "sizee" in r["message"]["text"]]
        assert len(located) == 1
        assert located[0]["artifactLocation"]["uri"].endswith("api/v1/shop_types.go")
        assert located[0]["region"]["startLine"] == line
        assert located[0]["region"]["startColumn"] == column
    elif output == "junit":
        assert 'file="api/v1/shop_types.go"' in text and f'line="{line}"' in text
    else:
        (shop,) = [r for r in json.loads(text) if r.get("crd") == "shops.shop.example.com"]
        assert not shop["valid"] and "sizee" in json.dumps(shop["errors"])


@pytest.mark.parametrize("strict", [False, True])
def test_a_rule_cut_by_a_comma_is_linted_at_its_marker(tmp_path: Path, strict: bool) -> None:
    from tests.gotypes.widget import RULE, write_widget

    types = write_widget(tmp_path)
    cut = f"rule={RULE} || self.replicas > 0"  # unquoted: controller-gen's grammar stops at the first comma
    quoted = 'rule="' + RULE + '",message="replicas must not exceed maxReplicas"'
    types.write_text(types.read_text().replace(quoted, cut.replace("> 0", "> 0 && [1].all(a, a > 0)")))
    line = next(i for i, t in enumerate(types.read_text().splitlines(), 1) if "[1].all(a," in t)
    result = _kcel("check", "-o", "github", *(["--strict"] if strict else []), "./...", cwd=tmp_path,
                   env_cache=tmp_path / "none")  # fmt: skip
    (lint,) = [a for a in result.stdout.splitlines() if "lint marker-comma" in a]
    assert lint.startswith(f"::{'error' if strict else 'warning'} file=api/v1/widget_types.go,line={line},col=")
    assert "quote it with backquotes: rule=`" in lint
    assert result.returncode == 1  # controller-gen's own grammar error (`expected equals`) fails it either way
