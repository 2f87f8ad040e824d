"""CRDs as the API server sees them: loading manifests, the rule checks at CRD create/update, CEL on objects.

The create checks follow apiextensions-apiserver pkg/apis/apiextensions/validation (validation.go and its
TestValidateCustomResourceDefinitionValidation cases); messages are pinned in full. The last tests run the
shared CRD corpus (../shared/crds) through the conformance runner.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest

import kcel.k8s.crds.crd
from conformance import crds as runner
from conformance.outcome import SkipList
from kcel.k8s.crds.crd import CRD, CRDLoadError, check_crd, internal_schemas, load_crds, validate_crd
from kcel.k8s.crds.objects import validate_object
from tests.conftest import SHARED

SKIP_FILE = Path(runner.__file__).with_name("crds_skips.txt")
CORPUS = SHARED / "crds"

# --- loading ---------------------------------------------------------------------------------------------


def crd_doc(schema: Any = None, *, versions: tuple[str, ...] = ("v1",), name: str = "widgets", **spec: Any) -> Any:
    """A v1 CRD document; every version gets `schema` (a dict per version name is also accepted)."""
    listed = []
    for i, version in enumerate(versions):
        entry: dict[str, Any] = {"name": version, "served": True, "storage": i == 0}
        chosen = schema.get(version) if isinstance(schema, dict) and version in schema else schema
        if chosen is not None:
            entry["schema"] = {"openAPIV3Schema": chosen}
        listed.append(entry)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{name}.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": name.title().rstrip("s"), "plural": name},
            "versions": listed,
            **spec,
        },
    }


def one_crd(schema: Any, **options: Any) -> CRD:
    (crd,) = load_crds(json.dumps(crd_doc(schema, **options)))
    return crd


def test_multiple_documents_lists_and_other_kinds(tmp_path: Path) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [crd_doc(name="gadgets"), crd_doc(name="gizmos")]}
    text = "\n---\n".join(
        [json.dumps(crd_doc({"type": "object"})), "", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"]
        + [json.dumps(listed)]
    )
    path = tmp_path / "crds.yaml"
    path.write_text(text)
    crds = load_crds(path)
    assert [(c.name, c.kind_group, c.source) for c in crds] == [
        ("widgets.example.com", "Widget.example.com", f"{path}: document 0"),
        ("gadgets.example.com", "Gadget.example.com", f"{path}: document 3"),
        ("gizmos.example.com", "Gizmo.example.com", f"{path}: document 3"),
    ]
    assert crds[0].versions[0].schema is not None and crds[0].versions[0].schema.type == "object"
    assert crds[1].versions[0].schema is None


def test_json_file_and_v1beta1_top_level_validation(tmp_path: Path) -> None:
    doc = crd_doc(None, versions=())
    doc["apiVersion"] = "apiextensions.k8s.io/v1beta1"
    doc["spec"].update(
        version="v1alpha1", validation={"openAPIV3Schema": {"type": "object"}}, subresources={"status": {}}
    )
    path = tmp_path / "crd.json"
    path.write_text(json.dumps(doc))
    (crd,) = load_crds(path)
    version = crd.version("v1alpha1")
    assert (version.served, version.storage, version.status_subresource, version.schema) == (True, True, True, None)
    assert crd.schema_of(version) is crd.validation and crd.validation is not None
    assert [str(p) for p, _ in internal_schemas(crd)] == ["spec.validation.openAPIV3Schema"]


def test_yaml_read_as_sigs_k8s_io_yaml_reads_it() -> None:
    text = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ws.example.com}
spec:
  group: example.com
  names: {kind: W, plural: ws}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          op: {type: string, enum: ['!=', =, =~]}
          since: {type: string, default: 2024-01-02}
          on: {type: boolean}
"""
    (crd,) = load_crds(text)
    schema = crd.versions[0].schema
    assert schema is not None and schema.properties is not None
    assert schema.properties["op"].enum == ("!=", "=", "=~")
    assert schema.properties["since"].default == "2024-01-02"
    assert "true" in schema.properties  # a YAML 1.1 boolean key, as JSON spells it


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "a: [1, 2\nb: 3\n",
            "<text>:2:2: invalid YAML: did not find expected ',' or ']' "
            "(while parsing a flow sequence at line 1, column 4)",
        ),
        ("a: b: c\n", "<text>:1:5: invalid YAML: mapping values are not allowed in this context"),
        ("- 1\n", "<text>: document 0: <root>: must be an object"),
    ],
)
def test_bad_yaml_names_the_position(text: str, message: str) -> None:
    with pytest.raises(CRDLoadError) as caught:
        load_crds(text)
    assert str(caught.value) == message


def test_bad_json_file_names_the_position(tmp_path: Path) -> None:
    path = tmp_path / "crd.json"
    path.write_text('{"kind":\n  }')
    with pytest.raises(CRDLoadError, match=r"crd\.json:2:3: invalid JSON: Expecting value$"):
        load_crds(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["spec"]["versions"][0].update(name=1), "spec.versions[0].name: must be a string"),
        (lambda d: d["spec"]["versions"][0].update(served="yes"), "spec.versions[0].served: must be a boolean"),
        (lambda d: d["spec"].pop("group"), "spec.group: required"),
        (lambda d: d["spec"].update(versions={}), "spec.versions: must be an array"),
        (lambda d: d["spec"].update(names=[]), "spec.names: must be an object"),
        (lambda d: d.update(apiVersion="v1"), "apiVersion: unsupported CustomResourceDefinition version 'v1'"),
        (
            lambda d: d["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(properties={"spec": {"type": 3}}),
            "spec.versions[0].schema.openAPIV3Schema.properties.spec.type: must be a string, got number",
        ),
    ],
)
def test_bad_documents_name_document_and_field(change: Any, message: str) -> None:
    doc = crd_doc({"type": "object"})
    change(doc)
    other = json.dumps(crd_doc({"type": "object"}, name="others"))
    with pytest.raises(CRDLoadError) as caught:
        load_crds(f"{other}\n---\n{json.dumps(doc)}")
    assert str(caught.value) == f"<text>: document 1: {message}"


def test_bad_list_item_names_its_index() -> None:
    text = json.dumps({"kind": "List", "items": [crd_doc(), {"kind": "CustomResourceDefinition", "spec": {}}]})
    with pytest.raises(CRDLoadError, match=r"^<text>: document 0: items\[1\]\.apiVersion: required$"):
        load_crds(text)


def test_missing_file() -> None:
    with pytest.raises(CRDLoadError, match="cannot read"):
        load_crds(Path("/nonexistent/crd.yaml"))


# --- checks at CRD create --------------------------------------------------------------------------------

ROOT = "spec.validation.openAPIV3Schema"


def with_rules(prop: Any, *rules: Any) -> Any:
    return {**prop, "x-kubernetes-validations": list(rules)}


def rules_on(prop: Any, *rules: Any) -> Any:
    """A schema with a property `value` that carries `rules`."""
    return {"type": "object", "properties": {"value": with_rules(prop, *rules)}}


def create_errors(schema: Any, **options: Any) -> list[str]:
    return [str(e) for e in validate_crd(one_crd(schema, **options))]


STRING = {"type": "string", "maxLength": 10}
AT = f"{ROOT}.properties[value].x-kubernetes-validations[0]"


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"rule": " \t"}, [f"{AT}.rule: Required value: rule is not specified"]),
        ({"rule": "true", "message": "  "}, [f'{AT}.message: Invalid value: "  ": must be non-empty if specified']),
        ({"rule": "true", "message": "a\nb"}, [f'{AT}.message: Invalid value: "a\\nb": must not contain line breaks']),
        (
            {"rule": "true &&\r\ntrue"},
            [f"{AT}.message: Required value: message must be specified if rule contains line breaks"],
        ),
        ({"rule": "true &&\ntrue", "message": "m"}, []),
        (
            {"rule": "true", "messageExpression": " "},
            [f"{AT}.messageExpression: Required value: messageExpression must be non-empty if specified"],
        ),
        (
            {"rule": "true", "reason": "FieldValueTooLong"},
            [
                f'{AT}.reason: Unsupported value: "FieldValueTooLong": supported values: "FieldValueDuplicate", '
                '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'
            ],
        ),
        ({"rule": "true", "reason": "FieldValueForbidden"}, []),
    ],
)
def test_rule_field_checks(rule: Any, expected: list[str]) -> None:
    assert create_errors(rules_on(STRING, rule)) == expected


def test_only_the_first_message_problem_is_reported() -> None:
    rule = {"rule": "\n", "message": " "}  # blank rule wins over the blank message
    assert create_errors(rules_on(STRING, rule)) == [f"{AT}.rule: Required value: rule is not specified"]


@pytest.mark.parametrize(
    ("field_path", "expected"),
    [
        (" ", ['Invalid value: " ": must be non-empty if specified', 'Invalid value: " ": must be a valid path']),
        (
            ".a\n",
            ['Invalid value: ".a\\n": must not contain line breaks', 'Invalid value: ".a\\n": must be a valid path'],
        ),
        (".b", ['Invalid value: ".b": must be a valid path']),
        ("[0]", ['Invalid value: "[0]": must be a valid path']),
        (".a", []),
        ("['a']", []),
    ],
)
def test_field_path_checks(field_path: str, expected: list[str]) -> None:
    prop = {"type": "object", "properties": {"a": STRING}}
    errors = create_errors(rules_on(prop, {"rule": "true", "fieldPath": field_path}))
    assert errors == [f"{AT}.fieldPath: {e}" for e in expected]


def test_compile_errors_show_the_rule_as_a_go_struct() -> None:
    prop = {"type": "object", "properties": {"a": STRING}}
    rule = {"rule": "self.nope == 1", "message": "m", "reason": "FieldValueForbidden", "fieldPath": ".a"}
    assert create_errors(rules_on(prop, rule)) == [
        f'{AT}.rule: Invalid value: {{"Rule":"self.nope == 1","Message":"m","MessageExpression":"",'
        '"Reason":"FieldValueForbidden","FieldPath":".a","OptionalOldSelf":null}: compilation failed: '
        "ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"
    ]


def test_before_1_34_the_rule_struct_prints_in_go_syntax() -> None:
    """ErrorBody used `%#v` for structs until apimachinery c58e197e (1.34); nil pointers print with their type."""
    crd = one_crd(rules_on({"type": "object", "properties": {"a": STRING}}, {"rule": "self.nope == 1"}))
    (error,) = validate_crd(crd, k8s_version="1.33")
    assert str(error).startswith(
        f'{AT}.rule: Invalid value: apiextensions.ValidationRule{{Rule:"self.nope == 1", Message:"", '
        'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", '
        "OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: undefined field 'nope'"
    )


@pytest.mark.parametrize(
    ("rule", "field", "detail"),
    [
        ({"rule": "self"}, "rule", "cel expression must evaluate to a bool"),
        (
            {"rule": "true", "messageExpression": "1"},
            "messageExpression",
            "messageExpression must evaluate to a string",
        ),
        (
            {"rule": "true", "messageExpression": "self + 1"},
            "messageExpression",
            "messageExpression compilation failed: ERROR: <input>:1:6: found no matching overload for '_+_' "
            "applied to '(string, int)'\n | self + 1\n | .....^",
        ),
    ],
)
def test_compile_error_details(rule: Any, field: str, detail: str) -> None:
    (error,) = validate_crd(one_crd(rules_on(STRING, rule)))
    assert (str(error.field), error.detail) == (f"{AT}.{field}", detail)
    assert error.body().startswith('Invalid value: {"Rule":')


def test_schema_errors_below_skip_compilation_of_the_rules_above() -> None:
    schema = rules_on({"type": "object", "properties": {"a": with_rules(STRING, {"rule": ""})}}, {"rule": "nope"})
    assert create_errors(schema) == [
        f"{ROOT}.properties[value].properties[a].x-kubernetes-validations[0].rule: "
        "Required value: rule is not specified"
    ]


@pytest.mark.parametrize("list_type", [None, "atomic", "set"])
def test_old_self_under_an_uncorrelatable_list(list_type: str | None) -> None:
    inner = {"type": "array", "x-kubernetes-list-type": "set", "items": rules_on(STRING, {"rule": "self == oldSelf"})}
    outer: dict[str, Any] = {"type": "array", "items": {"type": "object", "properties": {"inner": inner}}}
    if list_type:
        outer["x-kubernetes-list-type"] = list_type
    errors = create_errors({"type": "object", "properties": {"list": outer}})
    assert errors == [
        f"{ROOT}.properties[list].items.properties[inner].items.properties[value].x-kubernetes-validations[0].rule: "
        f'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema '
        f"within {ROOT}.properties[list]"
    ]


def test_old_self_under_map_lists_and_unknown_map_types() -> None:
    keyed = {"type": "object", "properties": {"k": STRING}, "required": ["k"]}
    map_list = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}
    map_list["items"] = {**keyed, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
    assert create_errors({"type": "object", "properties": {"list": map_list}}) == []
    future = {
        "type": "object",
        "x-kubernetes-map-type": "future",
        "properties": {"sub": with_rules(STRING, {"rule": "self == oldSelf"})},
    }
    assert create_errors({"type": "object", "properties": {"value": future}}) == [
        f'{ROOT}.properties[value].properties[sub].x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": '
        f"oldSelf cannot be used on the uncorrelatable portion of the schema within {ROOT}.properties[value]"
    ]


@pytest.mark.parametrize("optional", [True, False])
def test_optional_old_self_needs_old_self(optional: bool) -> None:
    errors = create_errors(rules_on(STRING, {"rule": 'self == "foo"', "optionalOldSelf": optional}))
    assert errors == [
        f"{AT}.optionalOldSelf: Invalid value: {str(optional).lower()}: may not be set if oldSelf is not used in rule"
    ]
    transition = 'self == oldSelf.orValue("")' if optional else "self == oldSelf"
    assert create_errors(rules_on(STRING, {"rule": transition, "optionalOldSelf": optional})) == []


def test_rules_nested_in_all_of_are_not_structural_and_stop_all_compilation() -> None:
    schema = rules_on({**STRING, "allOf": [{"x-kubernetes-validations": [{"rule": "true"}]}]}, {"rule": "nope"})
    assert create_errors(schema) == [
        f"{ROOT}.properties[value].allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural"
    ]


def test_rules_on_nodes_cel_cannot_see() -> None:
    schema = rules_on({"x-kubernetes-preserve-unknown-fields": True}, {"rule": "true"})
    assert create_errors(schema) == [
        f"{ROOT}.properties[value].x-kubernetes-validations: Internal error: internal error: failed to construct "
        "type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations"
    ]


def test_identical_schemas_are_checked_once_at_spec_validation() -> None:
    bad = rules_on(STRING, {"rule": ""})
    assert create_errors(bad, versions=("v1", "v2")) == [f"{AT}.rule: Required value: rule is not specified"]
    errors = create_errors({"v1": bad, "v2": {"type": "object"}}, versions=("v1", "v2"))
    assert errors == [
        "spec.versions[0].schema.openAPIV3Schema.properties[value].x-kubernetes-validations[0].rule: "
        "Required value: rule is not specified"
    ]


def test_schema_errors_come_before_cel_errors() -> None:
    schema = {"type": "object", "properties": {
        "a": with_rules(STRING, {"rule": "nope"}),
        "b": with_rules(STRING, {"rule": ""}),
    }}  # fmt: skip
    assert [str(e.field) for e in validate_crd(one_crd(schema))] == [
        f"{ROOT}.properties[b].x-kubernetes-validations[0].rule",
        f"{ROOT}.properties[a].x-kubernetes-validations[0].rule",
    ]


def test_update_compiles_existing_expressions_in_the_stored_environment() -> None:
    # Two-variable comprehensions arrived in 1.32: a 1.32 API server stores them but offers new expressions 1.31's
    # environment, so only rules and messageExpressions the old CRD already had may use them.
    rule = {"rule": "[1].all(i, v, v > i)", "messageExpression": "[1].exists(i, v, v > i) ? 'a' : 'b'"}
    old = one_crd(rules_on(STRING, rule))
    new = one_crd(rules_on(STRING, rule, {"rule": "[1].all(i, v, v > i)"}))
    assert validate_crd(new, old, k8s_version="1.32") == []
    assert validate_crd(new, k8s_version="1.33") == []
    details = [e.detail.partition("\n")[0] for e in validate_crd(new, k8s_version="1.32")]
    assert details == ["compilation failed: ERROR: <input>:1:8: undeclared reference to 'all' (in container '')"] * 2
    changed = one_crd(rules_on(STRING, {**rule, "messageExpression": "[1].exists(i, v, v < i) ? 'a' : 'b'"}))
    (error,) = validate_crd(changed, old, k8s_version="1.32")
    assert str(error.field) == f"{AT}.messageExpression"


def test_before_1_31_unchanged_message_expressions_compiled_as_new() -> None:
    """A 1.30 API server took the old rules' texts for the old messageExpressions (apiextensions 5d129eee2): an
    unchanged messageExpression using what only stored expressions may (isIP, from 1.30) was rejected on update."""
    rule = {"rule": "isIP(self)", "messageExpression": "string(isIP(self))"}
    old = one_crd(rules_on(STRING, rule))
    (error,) = validate_crd(one_crd(rules_on(STRING, rule)), old, k8s_version="1.30")
    assert str(error.field) == f"{AT}.messageExpression"
    assert "undeclared reference to 'isIP'" in error.detail
    assert validate_crd(one_crd(rules_on(STRING, rule)), old, k8s_version="1.31") == []


# --- custom resources ------------------------------------------------------------------------------------

WIDGET = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.minReplicas <= self.maxReplicas
              message: minReplicas must not exceed maxReplicas
            properties:
              minReplicas: {type: integer}
              maxReplicas:
                type: integer
                x-kubernetes-validations: [{rule: self <= 10, message: must be at most 10}]
              mode:
                type: string
                x-kubernetes-validations: [{rule: self == oldSelf, message: mode is immutable}]
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
                  x-kubernetes-validations:
                  - rule: self.port >= 1 && self.port <= 65535
                    message: port must be between 1-65535
                    fieldPath: .port
          status:
            type: object
            properties:
              phase:
                type: string
                x-kubernetes-validations:
                - {rule: "self in ['Pending', 'Ready']", message: unknown phase, reason: FieldValueForbidden}
"""


@pytest.fixture(scope="module")
def widget() -> CRD:
    (crd,) = load_crds(WIDGET)
    assert validate_crd(crd) == []
    return crd


def widget_object(spec: Any, status: Any = None, version: str = "v1") -> dict[str, Any]:
    obj = {"apiVersion": f"example.com/{version}", "kind": "Widget", "metadata": {"name": "w1"}, "spec": spec}
    return obj if status is None else {**obj, "status": status}


def test_valid_object(widget: CRD) -> None:
    result = validate_object(widget, widget_object({"minReplicas": 1, "maxReplicas": 3}))
    assert (result.errors, result.warnings, result.message) == ([], [], "")


def test_create_errors_and_the_422_message(widget: CRD) -> None:
    spec = {"minReplicas": 12, "maxReplicas": 11, "ports": [{"name": "http", "port": 70000}]}
    result = validate_object(widget, widget_object(spec))
    assert result.message == (
        'Widget.example.com "w1" is invalid: [spec: Invalid value: minReplicas must not exceed maxReplicas, '
        "spec.maxReplicas: Invalid value: 11: must be at most 10, "
        "spec.ports[0].port: Invalid value: port must be between 1-65535]"
    )


def test_transition_rules_run_on_update_only(widget: CRD) -> None:
    old = widget_object({"minReplicas": 1, "maxReplicas": 3, "mode": "a"})
    new = widget_object({"minReplicas": 1, "maxReplicas": 3, "mode": "b"})
    assert validate_object(widget, new).errors == []
    assert validate_object(widget, new, old).message == (
        'Widget.example.com "w1" is invalid: spec.mode: Invalid value: "b": mode is immutable'
    )


def test_unchanged_invalid_values_are_ratcheted_to_warnings(widget: CRD) -> None:
    old = widget_object({"minReplicas": 1, "maxReplicas": 30})
    result = validate_object(widget, widget_object({"minReplicas": 2, "maxReplicas": 30}), old)
    assert (result.errors, result.warnings) == ([], ["spec.maxReplicas: Invalid value: 30: must be at most 10"])


def test_status_updates_are_ratcheted_from_1_33(widget: CRD) -> None:
    """apiextensions 25c2ba633: before 1.33 a status update re-checked unchanged invalid status values."""
    old = widget_object({"minReplicas": 1, "maxReplicas": 3}, {"phase": "Gone"})
    new = widget_object({"minReplicas": 1, "maxReplicas": 3}, {"phase": "Gone"})
    ratcheted = validate_object(widget, new, old, subresource="status", k8s_version="1.33")
    assert (ratcheted.errors, ratcheted.warnings) == ([], ["status.phase: Forbidden: unknown phase"])
    checked = validate_object(widget, new, old, subresource="status", k8s_version="1.32")
    assert checked.message == 'Widget.example.com "w1" is invalid: status.phase: Forbidden: unknown phase'


def test_a_1_30_api_server_named_status_schema_errors_without_status(widget: CRD) -> None:
    """apiextensions 5650a2e3d (1.31) passed the `status` path to the status schema's validator."""
    old = widget_object({"minReplicas": 1, "maxReplicas": 3}, {"phase": "Ready"})
    new = widget_object({"minReplicas": 1, "maxReplicas": 3}, {"phase": 1})
    messages = [
        validate_object(widget, new, old, subresource="status", k8s_version=v).message for v in ("1.30", "1.31")
    ]
    assert [m.partition("is invalid: ")[2].partition(",")[0] for m in messages] == [
        '[phase: Invalid value: "integer": phase in body must be of type string: "integer"',
        '[status.phase: Invalid value: "integer": phase in body must be of type string: "integer"',
    ]


def test_status_is_dropped_on_create_and_kept_on_update(widget: CRD) -> None:
    spec, bad_status = {"minReplicas": 1, "maxReplicas": 3}, {"phase": "Gone"}
    assert validate_object(widget, widget_object(spec, bad_status)).errors == []
    old = widget_object(spec, {"phase": "Ready"})
    assert validate_object(widget, widget_object(spec, bad_status), old).errors == []
    # A status update keeps everything but the status from the old object: the bad spec here is ignored.
    new = widget_object({"minReplicas": 9, "maxReplicas": 1}, bad_status)
    result = validate_object(widget, new, old, subresource="status")
    assert result.message == 'Widget.example.com "w1" is invalid: status.phase: Forbidden: unknown phase'


def test_object_version_must_be_served(widget: CRD) -> None:
    with pytest.raises(ValueError, match="serves no version 'v2'"):
        validate_object(widget, widget_object({}, version="v2"))
    with pytest.raises(ValueError, match="is not in group"):
        validate_object(widget, {**widget_object({}), "apiVersion": "other.io/v1"})


def test_doctests() -> None:
    assert doctest.testmod(kcel.k8s.crds.crd).failed == 0


# --- the shared corpus -----------------------------------------------------------------------------------

PROJECTS = sorted(p.name for p in CORPUS.iterdir() if (p / "index.json").is_file()) if CORPUS.is_dir() else []


@pytest.mark.skipif(not PROJECTS, reason=f"CRD corpus not found at {CORPUS} (../shared is absent)")
@pytest.mark.parametrize("project", PROJECTS or ["-"])
def test_corpus_project(project: str) -> None:
    """Every outcome passes or is skipped by the runner with a reason; skip-list entries must still fail."""
    skips = SkipList.read(SKIP_FILE)
    outcomes = runner.run_project(CORPUS / project, SkipList((), {}))
    listed = [o for o in outcomes if skips.reason(o.id) is not None]
    assert [o.id for o in listed if o.status == "passed"] == [], "passing now: remove from crds_skips.txt"
    failed = [f"{o.id}: {o.reason}" for o in outcomes if o.status == "failed" and skips.reason(o.id) is None]
    assert failed == []
    skipped = [o for o in outcomes if o.status == "skipped"]
    if skipped or listed:
        print(f"{project}: {len(skipped)} skipped by the runner, {len(listed)} listed in crds_skips.txt")


def test_the_runner_honours_version_field_validation_and_stored(tmp_path: Path) -> None:
    """Any directory in the corpus format: `kubernetesVersion` picks the API server's texts, `fieldValidation`
    (absent: Warn) how unknown fields are met, and `stored` is compared as upstream's harness compares it."""
    project = tmp_path / "widgets"
    project.mkdir()
    (project / "crd.yaml").write_text(WIDGET, encoding="utf-8")
    entry = {"file": "crd.yaml", "name": "widgets.example.com", "group": "example.com", "kind": "Widget",
             "versions": [{"name": "v1", "served": True, "storage": True, "rules": 5}]}  # fmt: skip
    (project / "index.json").write_text(json.dumps({"project": "widgets", "crds": [entry]}), encoding="utf-8")
    too_many = widget_object({"minReplicas": 1, "maxReplicas": 30})
    unknown = widget_object({"minReplicas": 1, "maxReplicas": 3, "extra": 1})
    stored = {**widget_object({"minReplicas": 1, "maxReplicas": 3}), "metadata": {"name": "other", "uid": "u"}}
    cases = [
        ("old-text", too_many, {"errors": ['spec.maxReplicas: Invalid value: "integer": must be at most 10']},
         {"kubernetesVersion": "1.34"}),
        ("new-text", too_many, {"errors": ["spec.maxReplicas: Invalid value: 30: must be at most 10"]}, {}),
        ("old-text-at-new-version", too_many, {"errors": ['Invalid value: "integer"']}, {}),
        ("warn-by-default", unknown, "valid", {}),
        ("strict", unknown, {"errors": ['unknown field "spec.extra"']}, {"fieldValidation": "Strict"}),
        ("stored", widget_object({"minReplicas": 1, "maxReplicas": 3}), "valid", {"stored": stored}),
        ("stored-differs", widget_object({"minReplicas": 1, "maxReplicas": 4}), "valid", {"stored": stored}),
    ]  # fmt: skip
    common = {"crd": "crd.yaml", "version": "v1", "operation": "CREATE"}
    lines = [
        json.dumps({"id": name, **common, "object": obj, "expect": expect, **extra})
        for name, obj, expect, extra in cases
    ]
    (project / "cases.json").write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    outcomes = {o.id: o.status for o in runner.run_project(project, SkipList((), {}))}
    assert outcomes == {
        "widgets/widgets.example.com/v1": "passed", "widgets/old-text": "passed", "widgets/new-text": "passed",
        "widgets/old-text-at-new-version": "failed", "widgets/warn-by-default": "passed", "widgets/strict": "passed",
        "widgets/stored": "passed", "widgets/stored-differs": "failed",
    }  # fmt: skip


def test_before_1_34_rule_field_details_named_the_field() -> None:
    """apiextensions 890aa9b3b (1.34) dropped the field's name from these details."""
    crd = one_crd(rules_on(STRING, {"rule": "true", "message": "a\nb", "fieldPath": " "}))
    assert [e.detail for e in validate_crd(crd, k8s_version="1.33")] == [
        "message must not contain line breaks",
        "fieldPath must be non-empty if specified",
        "fieldPath must be a valid path",
    ]
    assert [e.detail for e in validate_crd(crd, k8s_version="1.34")] == [
        "must not contain line breaks", "must be non-empty if specified", "must be a valid path",
    ]  # fmt: skip


def test_a_literal_format_call_with_a_wrong_argument_is_rejected_from_1_31() -> None:
    rule = {"rule": "self.size() > 1", "messageExpression": "'%d is too short'.format([self])"}
    crd = one_crd(rules_on(STRING, rule))
    assert validate_crd(crd, k8s_version="1.30") == []
    (error,) = validate_crd(crd, k8s_version="1.31")
    assert str(error.field) == f"{AT}.messageExpression"
    assert "decimal clause can only be used on integers, was given string" in error.detail


@pytest.mark.parametrize(("version", "expected"), [
    ("1.33", []),
    ("1.34", ['unrecognized format "my-format"']),  # 1.34.0 warned for int32 and uuid7 too, 1.34.1 not
    ("1.35", ['unrecognized format "my-format"']),
    ("1.36", ['unrecognized format "my-format"', 'unrecognized format "uuid7"']),
])  # fmt: skip
def test_unrecognized_formats_warn_on_create_as_each_version_does(version: str, expected: list[str]) -> None:
    """CRD WarningsOnCreate, as the newest patch of each minor: from 1.34 on strings only (53a711153, backported to
    1.34.1), from 1.36 what StripUnsupportedFormats drops (0835a2fa9)."""
    schema = {"type": "object", "properties": {
        "s": {"type": "string", "format": "my-format"}, "i": {"type": "integer", "format": "int32"},
        "n": {"type": "integer", "format": "uuid7"}, "d": {"type": "string", "format": "date-time"},
    }}  # fmt: skip
    crd = one_crd(schema)
    assert check_crd(crd, k8s_version=version).warnings == expected
    assert check_crd(crd, crd, k8s_version=version).warnings == []  # an update warns only about new ones


def test_sets_of_objects_warn_from_1_37() -> None:
    """apiextensions 791b2c6f4 (1.37): server-side apply and CEL handle only sets of scalars."""
    items = {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": STRING}}
    crd = one_crd({"type": "object", "properties": {"s": {"type": "array", "x-kubernetes-list-type": "set",
                                                          "items": items}}})  # fmt: skip
    assert validate_crd(crd) == []
    assert check_crd(crd, k8s_version="1.36").warnings == []
    assert check_crd(crd, k8s_version="1.37").warnings == [
        'x-kubernetes-list-type: set for items of type "object" is not supported by server-side apply or CEL '
        "validation rules"
    ]
    assert check_crd(crd, crd, k8s_version="1.37").warnings == []
