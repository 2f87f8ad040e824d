"""controller-gen's `crd` options that change a schema, read from the project's Makefile as `make manifests` passes
them: kcel's derivation of the fleet fixture (tests/gotypes/fleet.py) against controller-gen v0.21.0's answer
(tests/gotypes/golden/fleet), and the description cutting of controller-tools' desc_visitor.go."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml

pytest.importorskip("tree_sitter_go", reason="the kcel[go] extra (tree-sitter-go) is not installed")

from kcel.k8s.gotypes import packages  # noqa: E402
from kcel.k8s.gotypes.derive import derive_crds  # noqa: E402
from kcel.k8s.gotypes.options import (  # noqa: E402
    GenerationOptions,
    makefile_options,
    options_for,
    parse_crd_argument,
    truncate_descriptions,
)
from tests.gotypes.fleet import write_fleet  # noqa: E402
from tests.gotypes.shop import write_shop  # noqa: E402

_FOLDER = tempfile.TemporaryDirectory(prefix="kcel-fleet-")  # removed when the test run ends
SHOP = write_shop(Path(_FOLDER.name) / "shop")
FLEET = write_fleet(Path(_FOLDER.name) / "fleet")


@pytest.fixture
def shop_cache(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GOMODCACHE", str(SHOP / "gomodcache"))
    packages.module_cache.cache_clear()
    yield SHOP / "gomodcache"
    packages.module_cache.cache_clear()


def _golden() -> dict:
    return yaml.safe_load((FLEET / "out" / "fleet.example.com_fleets.yaml").read_text())


def test_the_makefiles_options_give_controller_gens_crd(shop_cache: Path) -> None:
    (derived,) = derive_crds([FLEET / "api" / "..."]).crds
    assert derived.manifest == _golden()


def test_without_the_options_the_embedded_metadata_has_no_fields(shop_cache: Path) -> None:
    derived = derive_crds([FLEET / "api" / "..."], options=GenerationOptions())
    spec = derived.crds[0].manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["template"]["properties"]["metadata"] == {
        "description": "metadata of the ships made from the template.", "type": "object"}  # fmt: skip
    assert [p.message.split(",")[0] for p in derived.problems] == ["found float"]


def test_makefile_invocations_are_read_with_their_paths(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text(
        "manifests:\n\t$(CONTROLLER_GEN) \\\n\t\tcrd:generateEmbeddedObjectMeta=true output:crd:artifacts:config=x\\\n"
        '\t\tpaths="./api/..."\n\t$(CONTROLLER_GEN) crd:maxDescLen=0 paths=./other/v1\n'
        "generate:\n\t$(CONTROLLER_GEN) object:headerFile=h.txt paths=./api/...\n"
    )
    assert makefile_options(tmp_path) == [GenerationOptions(True, False, None, ("./api/...",)),
                                          GenerationOptions(False, False, 0, ("./other/v1",))]  # fmt: skip
    (tmp_path / "api" / "v1").mkdir(parents=True)
    (tmp_path / "other" / "v1").mkdir(parents=True)
    assert options_for((tmp_path / "api" / "v1").resolve(), tmp_path).embedded_object_meta
    assert options_for((tmp_path / "other" / "v1").resolve(), tmp_path).max_description_length == 0
    assert options_for(tmp_path, None) == GenerationOptions()


@pytest.mark.parametrize(
    ("argument", "expected"),
    [("crd", GenerationOptions()), ("crd:allowDangerousTypes", GenerationOptions(allow_dangerous_types=True)),
     ("crd:crdVersions=v1,maxDescLen=128", GenerationOptions(max_description_length=128)),
     ("crd:generateEmbeddedObjectMeta=false", GenerationOptions())],
)  # fmt: skip
def test_crd_arguments(argument: str, expected: GenerationOptions) -> None:
    assert parse_crd_argument(argument) == expected


# controller-tools v0.21.0 pkg/crd/desc_visitor_test.go: its descriptions, lengths and answers
_SENTENCES = "This is top level description. There is an empty schema. More to come"
_WORDS = "This is top level description of the root object"


@pytest.mark.parametrize(
    ("description", "length", "expected"),
    [("top level description", 0, None),
     ("top level description of the root object.", 42, "top level description of the root object."),
     (_SENTENCES, len(_SENTENCES) - 5, "This is top level description. There is an empty schema."),
     (_WORDS, len(_WORDS) - 2, "This is top level description of the root...")],
)  # fmt: skip
def test_descriptions_are_cut_as_controller_tools_cuts_them(description: str, length: int,
                                                            expected: str | None) -> None:  # fmt: skip
    schema = {"description": description, "properties": {"a": {"description": description}},
              "items": {"description": description}, "default": {"description": description}}  # fmt: skip
    truncate_descriptions(schema, length)
    assert schema.get("description") == expected
    assert schema["properties"]["a"].get("description") == expected
    assert schema["items"].get("description") == expected
    assert schema["default"] == {"description": description}  # a value, not a schema
