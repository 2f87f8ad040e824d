"""Hostile manifests are refused the way the API server refuses them, quickly and in bounded memory.

The bounds are generous (seconds, tens of MiB): they catch an unbounded run, not a slow machine.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kcel.cli import main
from kcel.k8s.crds import CRDLoadError, load_crds, validate_object
from kcel.k8s.manifests.decoding import MAX_DOCUMENT_BYTES, decode_documents
from kcel.k8s.manifests.nesting import MAX_DEPTH, TOO_DEEP

ROOT = Path(__file__).resolve().parents[3]
CRD = str(ROOT / "examples" / "widget-crd.yaml")


@contextmanager
def bounded(seconds: float = 5.0, mebibytes: int = 64) -> Iterator[None]:
    tracemalloc.start()
    started = time.monotonic()
    try:
        yield
    finally:
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert elapsed < seconds, f"took {elapsed:.1f}s"
    assert peak < mebibytes * 2**20, f"peaked at {peak / 2**20:.0f} MiB"


def laughs(levels: int = 9, width: int = 9) -> str:
    """The 'billion laughs': each anchor a list of `width` aliases of the one before."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def only_error(text: str, name: str = "x.yaml") -> str:
    (document,) = decode_documents(text, name)
    return document.error


def test_a_billion_laughs_is_refused_at_once() -> None:
    with bounded(seconds=2.0, mebibytes=16):
        error = only_error(laughs())
    assert error == "x.yaml:1: invalid YAML: document contains excessive aliasing"


def test_kcel_validate_names_the_file_and_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("apiVersion: example.com/v1\nkind: Widget\n---\n" + laughs(), encoding="utf-8")
    with bounded(seconds=5.0):
        assert main(["validate", "--crd", CRD, str(bomb)]) == 1
    err = capsys.readouterr().err
    assert f"{bomb}: document 1: error: {bomb}:4: invalid YAML: document contains excessive aliasing" in err


def aliases(count: int, size: int = 100) -> str:
    """An anchored list of `size` items, then `count` aliases of it."""
    return f"base: &b [{', '.join(['x'] * size)}]\nuses: [{', '.join(['*b'] * count)}]\n"


@pytest.mark.parametrize(("count", "refused"), [(10, False), (3_900, False), (4_000, True)])
def test_the_alias_ratio_is_go_yamls(count: int, refused: bool) -> None:
    """Each alias of a 101-node list adds 102 decodes, 101 of them through the alias (a share nearing 99%): 3,900
    aliases stay under 400,000 decodes, where 99% is allowed; past 400,000 the allowed share falls below it."""
    with bounded():
        (document,) = decode_documents(aliases(count))
    assert bool(document.error) is refused
    if not refused:
        assert len(document.value["uses"]) == count and document.value["uses"][0] == ["x"] * 100


def test_an_anchor_may_be_used_a_few_times() -> None:
    (document,) = decode_documents("a: &x {k: v}\nb: *x\nc: [*x, *x]\n")
    assert document.value == {"a": {"k": "v"}, "b": {"k": "v"}, "c": [{"k": "v"}, {"k": "v"}]}


@pytest.mark.parametrize(("text", "name", "where"), [
    ("a: " + "[" * 50_000 + "]" * 50_000, "deep.yaml", "deep.yaml:1:1003: invalid YAML: a[0][0]"),
    ("a:\n  " + "- " * 50_000 + "x", "deep.yaml", "deep.yaml:2:2001: invalid YAML: a[0][0]"),
    ('{"a": ' + "[" * 50_000 + "]" * 50_000 + "}", "deep.json", "deep.json:1:1006: invalid JSON: a[0][0]"),
    ('{"a": ' + "[" * 3_000 + "]" * 3_000 + "}", "deep.json", "deep.json:1:1006: invalid JSON: a[0][0]"),
    ('{}\n{"a": ' + "[" * 3_000 + "]" * 3_000 + "}", "deep.json", "deep.json:2:1006: invalid JSON: a[0][0]"),
])  # fmt: skip
def test_deep_nesting_is_refused_where_the_limit_is_passed(text: str, name: str, where: str) -> None:
    """Past 1,000 levels (kcel's limit, libyaml's; Python's json and the walks after decoding recurse): the place
    and the field path, whether Python's json gave up (50,000 levels) or not (3,000)."""
    with bounded():
        error = decode_documents(text, name)[-1].error
    assert error.startswith(where) and error.endswith(f"{TOO_DEEP} (kcel's limit; the API server's is 10,000)")
    assert "…" in error and len(error) < 300


def nested(levels: int, inner: Any = "x") -> Any:
    for _ in range(levels):
        inner = {"a": inner}
    return inner


@pytest.mark.parametrize("name", ["at-limit.json", "at-limit.yaml"])
def test_the_limit_is_a_thousand_levels(name: str) -> None:
    text = json.dumps(nested(MAX_DEPTH))
    text = text if name.endswith(".json") else "# yaml\n" + text
    (document,) = decode_documents(text, name)
    assert document.value == nested(MAX_DEPTH)
    (document,) = decode_documents(text.replace('"x"', '["x"]'), name)
    assert TOO_DEEP in document.error and document.error.startswith(f"{name}:")


def test_aliases_may_not_nest_past_the_limit() -> None:
    """Each alias nests its anchor's 400 levels once more: the text is 400 deep, the value 1,200."""
    deep = "[" * 400 + "x" + "]" * 400
    text = f"a: &a {deep}\nb: &b {deep.replace('x', '*a')}\nc: {deep.replace('x', '*b')}\n"
    error = only_error(text)
    assert error.startswith("x.yaml:1: invalid YAML: c[0][0]") and TOO_DEEP in error


def test_validate_object_refuses_a_deep_object_from_the_embedding_api() -> None:
    """An object built in Python was never decoded: validate_object answers as the API server to a body it cannot
    decode (400), where a RecursionError used to escape from copying it."""
    (crd,) = load_crds(CRD)
    for levels, reason in ((MAX_DEPTH - 2, "Invalid"), (3_000, "BadRequest"), (100_000, "BadRequest")):
        obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": nested(levels)}
        with bounded():
            result = validate_object(crd, obj, field_validation="Ignore")
        assert result.reason == reason
    assert result.message.startswith('Widget in version "v1" cannot be handled as a Widget: spec.a.a.a')
    assert TOO_DEEP in result.message


def test_load_crds_refuses_a_deep_schema() -> None:
    schema = '{"type":"object","properties":{"a":' * 3_000 + '{"type":"string"}' + "}}" * 3_000
    text = (
        Path(CRD)
        .read_text(encoding="utf-8")
        .replace("    openAPIV3Schema:\n", f"    openAPIV3Schema: {schema}\n    x:\n", 1)
    )
    with pytest.raises(
        CRDLoadError, match=r"spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\.a\.properties…"
    ) as err:
        load_crds(text)
    assert TOO_DEEP in str(err.value) and str(err.value).startswith("<text>:")


def test_objects_over_three_mebibytes_are_refused_but_files_of_many_are_not() -> None:
    big = "a: " + "x" * (MAX_DOCUMENT_BYTES + 1) + "\n"
    with bounded(mebibytes=64):
        assert only_error(big) == "x.yaml:1: Request entity too large: limit is 3145728"
        assert only_error('{"a": "' + "x" * MAX_DOCUMENT_BYTES + '"}', "x.json") == (
            "x.json:1: Request entity too large: limit is 3145728"
        )
        many = "---\n".join(f"a: {'x' * 1000}\nn: {i}\n" for i in range(5_000))  # ~5 MB in 5,000 objects
        assert len(decode_documents(many)) == 5_000


def test_long_strings_and_keys_decode() -> None:
    key, value = "k" * 1_000_000, "v" * 2_000_000
    with bounded():
        (yaml_document,) = decode_documents(f"key: {value}\n")
        (json_document,) = decode_documents(f'{{"{key}": "{value[:1_000_000]}"}}', "long.json")
    assert yaml_document.value == {"key": value}
    assert json_document.value == {key: value[:1_000_000]}
    # YAML allows 1,024 characters for a plain key (libyaml and go-yaml alike): a longer one does not parse
    assert "invalid YAML: mapping values are not allowed in this context" in only_error(f"{key}: v\n")


@pytest.mark.parametrize(("content", "expected"), [
    (b"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: \xff\xfe}\n", "cannot read"),
    (b'\xef\xbb\xbf{"apiVersion": "example.com/v1", "kind": "Widget"}', "invalid"),
])  # fmt: skip
def test_bytes_that_are_not_a_manifest_get_one_line(
    content: bytes, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    assert main(["validate", "--crd", CRD, str(path)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(str(path))]
    assert len(lines) == 1 and expected in lines[0] and "Traceback" not in lines[0]


def test_every_entry_point_refuses_the_bomb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kcel admit` objects, `kcel test` suites and `kcel check` files decode alike: one line, no hang."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(laughs(), encoding="utf-8")
    suite = tmp_path / "bomb.kcel-test.yaml"
    suite.write_text(f"crds: {CRD}\ncases: []\n---\n" + laughs(), encoding="utf-8")
    policy = ROOT / "examples" / "admission" / "policies"
    with bounded(seconds=10.0):
        assert main(["admit", "--policy", str(policy), str(bomb)]) == 1
        assert main(["test", str(suite)]) == 2
        assert main(["check", str(bomb)]) == 1
    err = capsys.readouterr().err
    assert err.count("document contains excessive aliasing") == 3
