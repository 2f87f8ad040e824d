"""Where each character of a YAML scalar's value is in the file, for every style of scalar."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kcel.k8s.manifests.scalars import value_positions

TEXT = st.text(alphabet="ab c\t'\"\\#:é\n", min_size=1, max_size=30)


def positions(document: str) -> tuple[str, str, list[int] | None]:
    node = yaml.compose(document).value[0][1]
    raw = document[node.start_mark.index : node.end_mark.index]
    return node.value, raw, value_positions(raw, node.style, node.value)


def where_each_character_is(value: str, raw: str, found: list[int]) -> None:
    """Each character is the file's character at its position, or what an escape, a `''` or a folded line made."""
    for i, character in enumerate(value.rstrip("\n")):
        source = raw[found[i]]
        assert source == character or source in "\\'\n", (value, raw, i)
    assert len(found) == len(value.rstrip("\n")) + 1  # and one past the end


@settings(max_examples=300, deadline=None)
@given(TEXT, st.sampled_from(['"', "'", None]), st.sampled_from([12, 30, 80]))
def test_flow_scalars_as_a_yaml_writer_folds_and_escapes_them(text: str, style: str | None, width: int) -> None:
    document = yaml.dump({"k": text}, default_style=style, width=width)
    value, raw, found = positions(document)
    if found is None:  # a style the writer chose that is not rebuilt: no positions rather than wrong ones
        pytest.skip(f"no positions for {document!r}")
    assert value == text
    where_each_character_is(value, raw, found)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab c=<", min_size=0, max_size=12), min_size=1, max_size=5),
       st.sampled_from(["|", ">", "|-", ">-", "|+"]))  # fmt: skip
def test_block_scalars(lines: list[str], header: str) -> None:
    document = f"k: {header}\n" + "".join(f"  {line}\n" for line in lines)
    try:
        value, raw, found = positions(document)
    except yaml.YAMLError:  # a first line more indented than the next: not YAML
        return
    if found is None:
        assert not value.strip()  # only a block of empty lines has none
        return
    where_each_character_is(value, raw, found)


@pytest.mark.parametrize(("document", "character", "offset"), [
    ('k: "a\\tb"', 2, 4),  # after a two-character escape
    ("k: 'it''s'", 3, 5),  # after a doubled quote
    ("k: >\n  a\n  b\n", 2, 8),  # a folded line's text
    ("k: |\n  a\n  b\n", 2, 8),
    ("k: a\n  b\n", 2, 4),  # a plain scalar on two lines
])  # fmt: skip
def test_known_positions(document: str, character: int, offset: int) -> None:
    """`offset`: in the scalar's source, from its first character (a quote, the block header)."""
    found = positions(document)[2]
    assert found is not None and found[character] == offset


def test_an_explicit_indentation_gets_no_positions() -> None:
    assert positions("k: |2\n    a\n")[2] is None
