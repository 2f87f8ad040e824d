"""kcel.k8s.rules.lints and markerargs: each lint found on the shape real projects ship (rook's curled quote,
jobset's `t.metadata.namespace`, kube-api-linter#99's comma, istio's quote inside a quoted rule) and not on the
corrected rule, with the versions the API server itself (kcel's, at each version) bears out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kcel.annotations import go_markers
from kcel.errors import CompileError
from kcel.k8s.crds.crd import check_crd, load_crds
from kcel.k8s.rules.lints import (
    LINTS,
    confirmed_reserved,
    cost_by_version,
    curly_quotes,
    keyword_rejecting_versions,
    reserved_field_names,
    rule_lints,
    supported_versions,
)
from kcel.k8s.rules.markerargs import marker_lints
from kcel.k8s.surfaces.environments import environment

MARKER = "// +kubebuilder:validation:XValidation:"


def _go_file(marker_line: str) -> str:
    """A Go file with the marker on a type, as controller-gen finds markers."""
    return f"package v1\n\n{marker_line}\ntype Spec struct{{}}\n"


# rook/rook#13693: gofmt turned the '' of `self.provider == ''` into U+201D
ROOK = "(self.hostNetwork != true) || (self.provider  ==  \u201d)"
# kubernetes-sigs/jobset: a PVC template's metadata has a `namespace` property
JOBSET = "self.templates.all(t, !has(t.metadata.namespace) || size(t.metadata.namespace) == 0)"


def crd_with(rule: str, schema: dict[str, Any], tmp_path: Path) -> Any:
    spec = {"type": "object", "properties": {"claims": schema}}
    schema["x-kubernetes-validations"] = [{"rule": rule, "message": "bad"}]
    document = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "jobsets.jobset.x-k8s.io"},
        "spec": {"group": "jobset.x-k8s.io", "names": {"kind": "JobSet", "plural": "jobsets"}, "scope": "Namespaced",
                 "versions": [{"name": "v1alpha2", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]},
    }  # fmt: skip
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    (crd,) = load_crds(str(path))
    return crd


def claims_schema() -> dict[str, Any]:
    metadata = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 63},
                                                 "namespace": {"type": "string", "maxLength": 63}}}  # fmt: skip
    template = {"type": "object", "properties": {"metadata": metadata}}
    return {"type": "object", "properties": {"templates": {"type": "array", "maxItems": 50, "items": template}}}


# -- curly quotes ----------------------------------------------------------------------------------------------------


def test_rooks_curled_quote_is_found_at_its_character_with_the_straight_quotes_as_fix() -> None:
    (found,) = curly_quotes(ROOK)
    assert ROOK[found.start] == "\u201d" and found.end == found.start + 1
    assert "outside a string literal" in found.message and "U+201D" in found.message
    assert found.fix.startswith("'' instead") and found.versions == ()  # gofmt's '', at every version
    with pytest.raises(CompileError, match="token recognition error"):  # what the API server says instead
        environment("crd", "1.37").compile(ROOK)
    corrected = ROOK.replace("\u201d", "''")
    assert rule_lints(corrected) == []
    environment("crd", "1.37").compile(corrected)


def test_a_curled_quote_inside_a_string_literal_is_a_rule_that_silently_changed() -> None:
    rule = "self.title != 'it\u2019s' && self.note == r\"\u201cquoted\u201d\""
    found = curly_quotes(rule)
    assert [rule[f.start] for f in found] == ["\u2019", "\u201c", "\u201d"]
    assert all("inside a string literal" in f.message for f in found)
    assert [f.fix.split(" ")[0] for f in found] == ["'", '"', '"']  # a pair of curled double quotes is "..."
    environment("crd", "1.37").compile(rule)  # the API server accepts it: only the lint says anything


# -- marker arguments ------------------------------------------------------------------------------------------------


def fixed_marker(line: str, fix: str) -> str:
    """The marker with the finding's fix applied (`quote it with backquotes: rule=`...``)."""
    name, _, value = fix.partition(": ")[2].partition("=")
    value = value.split(", then a comma before ")[0]
    head, _, rest = line.partition(f"{name}=")
    rest_start = rest.find(",message=")
    return f"{head}{name}={value}" + (rest[rest_start:] if rest_start >= 0 else "")


def test_an_unquoted_rule_with_a_comma_is_cut_there_as_controller_gen_reads_it() -> None:
    """kube-api-linter#99's `self.all(a, a > 0)`: controller-tools' parser ends a bare value at the first comma."""
    line = MARKER + 'rule=self.all(a, a > 0),message="must be positive"'
    (found,) = marker_lints(line)
    assert line[found.start] == "," and line[: found.start].endswith("self.all(a")
    assert "reads rule as 'self.all(a'" in found.message and 'expected equals, got ">"' in found.message
    corrected = fixed_marker(line, found.fix)
    assert corrected == MARKER + 'rule=`self.all(a, a > 0)`,message="must be positive"'
    assert marker_lints(corrected) == []
    assert [m.rule for m in go_markers(_go_file(corrected))] == ["self.all(a, a > 0)"]


def test_a_quote_inside_a_quoted_rule_ends_it_there() -> None:
    """istio's WorkloadEntry marker (controller-tools#1211): the "" inside closes the Go string."""
    rule = "(default(self.address, \"\").startsWith('unix://')) ? !has(self.ports) : true"
    line = MARKER + f'message="UDS may not include ports",rule="{rule}"'
    (found,) = marker_lints(line)
    assert line[found.start] == '"' and line[: found.start].endswith("default(self.address, ")
    assert found.fix == f"quote it with backquotes: rule=`{rule}`"
    corrected = MARKER + f'message="UDS may not include ports",rule=`{rule}`'
    assert marker_lints(corrected) == [] and [m.rule for m in go_markers(_go_file(corrected))] == [rule]


@pytest.mark.parametrize(("arguments", "swallower", "swallowed"), [
    ('message=must be set rule="self.x != 1"', "message", "rule"),
    ('rule=self.a > 0 message="a must be positive"', "rule", "message"),
])  # fmt: skip
def test_an_unquoted_value_that_runs_on_into_the_next_argument(arguments: str, swallower: str, swallowed: str) -> None:
    line = MARKER + arguments
    (found,) = marker_lints(line)
    assert line[found.start :].startswith(f"{swallowed}=")
    assert f"the unquoted {swallower}= runs on into {swallowed}=" in found.message
    assert found.fix.endswith(f", then a comma before {swallowed}")


@pytest.mark.parametrize("arguments", [
    'message="at least one network selector must be specified when using multus",rule="!has(self.provider) || '
    "(self.provider != 'multus' || (self.provider == 'multus' && size(self.selectors) > 0))\"",  # rook, quoted
    "rule=self.a > 0,message=must be positive",  # bare values without a comma are read as written
    'rule=`self.all(a, a > 0)`,message="ok",reason=FieldValueInvalid,fieldPath=".a",optionalOldSelf=true',
    'rule="self.x == \\"a,b\\""',  # a comma inside a Go string
])  # fmt: skip
def test_markers_read_as_written_have_no_finding(arguments: str) -> None:
    assert marker_lints(MARKER + arguments) == []


# -- reserved words as field names -------------------------------------------------------------------------------


def test_jobsets_namespace_field_is_rejected_exactly_before_1_32(tmp_path: Path) -> None:
    found = reserved_field_names(JOBSET)
    assert [JOBSET[f.start : f.end] for f in found] == ["namespace", "namespace"]
    assert [f.start for f in found] == [JOBSET.index("namespace"), JOBSET.rindex("namespace")]
    assert keyword_rejecting_versions() == ("1.30", "1.31")
    assert all(f.versions == ("1.30", "1.31") for f in found)
    rewritten = found[0].fix.partition("accepts: ")[2]
    assert rewritten == JOBSET.replace(".namespace", ".__namespace__")
    written, fixed = crd_with(JOBSET, claims_schema(), tmp_path), crd_with(rewritten, claims_schema(), tmp_path)
    for version in supported_versions():  # the API server's own answer, version by version
        assert bool(check_crd(written, k8s_version=version).errors) == (version in found[0].versions), version
        assert not check_crd(fixed, k8s_version=version).errors, version
    (cost,) = check_crd(written, k8s_version="1.37").costs
    assert confirmed_reserved(found, cost) == found  # the schema bears it out
    assert reserved_field_names(rewritten) == []


def test_a_reserved_word_the_schema_does_not_have_is_left_to_the_api_server(tmp_path: Path) -> None:
    """The root's metadata offers only name and generateName: `self.metadata.namespace` fails on every version,
    and the API server says so; no lint promises a fix."""
    rule = "self.templates.all(t, t.metadata.namespace == '') && has(self.spec)"
    (cost,) = check_crd(crd_with(rule, claims_schema(), tmp_path), k8s_version="1.37").costs
    crd = crd_with("self.templates.all(t, t.metadata.namespace == '')", claims_schema(), tmp_path)
    (good,) = check_crd(crd, k8s_version="1.37").costs
    assert confirmed_reserved(reserved_field_names(rule), cost) == []  # `self.spec` is no field: rejected anyway
    assert len(confirmed_reserved(reserved_field_names(good.expression), good)) == 1


def test_words_the_lexer_refuses_after_a_dot_are_not_this_lint() -> None:
    assert reserved_field_names("self.in == 1") == []  # a syntax error at every version, which the API server says
    assert [f.fix.rpartition(": ")[2] for f in reserved_field_names("self.?namespace.orValue('') != ''")] == [
        "self.?__namespace__.orValue('') != ''"
    ]


# -- the cost budget by version ------------------------------------------------------------------------------------


def hosts_schema(rule: str, max_items: int | None) -> dict[str, Any]:
    host = {"type": "string", "maxLength": 63, "x-kubernetes-validations": [{"rule": rule}]}
    return {"type": "array", "items": host, **({"maxItems": max_items} if max_items else {})}


def costs_by_version(tmp_path: Path, rule: str, max_items: int | None) -> dict[str, Any]:
    crd = crd_with("true", hosts_schema(rule, max_items), tmp_path)
    found = {}
    for version in supported_versions():
        (cost,) = [c for c in check_crd(crd, k8s_version=version).costs if c.expression == rule]
        found[version] = cost
    return found


def test_a_rule_over_the_budget_at_some_versions_only(tmp_path: Path) -> None:
    """Before 1.33 the estimator does not follow the size of what dyn() wraps: unbounded, over the limit."""
    costs = costs_by_version(tmp_path, "dyn(self).matches('^[a-z]+$')", 1000)
    found = cost_by_version(costs)
    assert found is not None and found.lint == "cost-by-version"
    assert found.versions == ("1.30", "1.31", "1.32")
    assert all((costs[v].cost > 10_000_000) == (v in found.versions) for v in costs)
    assert "within it at 1.33-1.37" in found.message and "; 1.33-1.37: 54,000)" in found.message
    assert "dyn()" in found.fix


def test_a_bound_that_brings_a_rule_under_where_it_is_over_is_named(tmp_path: Path) -> None:
    """The fix's arithmetic (kcel.k8s.rules.explain's), on the costs of two schemas standing for two versions: the
    rule runs once per host, and the unbounded list makes it over the limit where the bounded one does not."""
    rule = "self.matches('^[a-z]+$')"
    unbounded, bounded = costs_by_version(tmp_path, rule, None), costs_by_version(tmp_path, rule, 1000)
    found = cost_by_version({"1.30": unbounded["1.30"], "1.37": bounded["1.37"]})
    assert found is not None and found.versions == ("1.30",)
    keyword, _, rest = found.fix.partition(": ")
    value = int(rest.split(" ")[0].replace(",", ""))
    assert keyword == "maxItems" and rest.endswith("on spec.claims brings it under the limit at every version")
    assert costs_by_version(tmp_path, rule, value)["1.30"].cost <= 10_000_000
    assert costs_by_version(tmp_path, rule, value + 1)["1.30"].cost > 10_000_000


def test_a_rule_within_or_over_everywhere_has_no_cost_lint(tmp_path: Path) -> None:
    assert cost_by_version(costs_by_version(tmp_path, "self.startsWith('a')", 1000)) is None
    over_everywhere = costs_by_version(tmp_path, "dyn(self).matches('^[a-z]+$')", None)
    assert all(cost.cost > 10_000_000 for cost in over_everywhere.values())
    assert cost_by_version(over_everywhere) is None  # an error at every version, explained there


def test_every_lint_is_in_the_table_with_its_versions_and_fix() -> None:
    assert set(LINTS) == {"curly-quote", "marker-comma", "reserved-field-name", "cost-by-version"}
    assert all(lint.finds and lint.concerns and lint.fix for lint in LINTS.values())
