"""Requests for custom resources through every step of the API server: (request) -> the 400/422 message."""

from __future__ import annotations

from typing import Any

import pytest

from kcel.k8s.crds.crd import CRD, load_crds, validate_crd
from kcel.k8s.crds.objects import validate_object
from kcel.k8s.customresources.objectmeta import MetadataError, decode_object_meta

GADGETS = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets}
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
            required: [size]
            x-kubernetes-validations:
            - {rule: "self.size <= self.limit", message: size must not exceed limit}
            properties:
              size: {type: integer, minimum: 0}
              limit: {type: integer, default: 10}
              color: {type: string, enum: [red, blue]}
              code: {type: string, pattern: "^[a-z]+$"}
              tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
          status:
            type: object
            properties:
              phase: {type: string, enum: [Ready, Pending]}
"""
NOT_CHECKED = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
    "correct the existing errors to complete validation"
)


@pytest.fixture(scope="module")
def gadgets() -> CRD:
    (crd,) = load_crds(GADGETS)
    assert validate_crd(crd) == []
    return crd


def gadget(spec: Any, **metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", **metadata}, "spec": spec}


def message(crd: CRD, obj: Any, old: Any = None, **options: Any) -> str:
    return validate_object(crd, obj, old, **options).message


CREATE = [
    ({"size": 3}, ""),
    ({"size": 30}, 'Gadget.example.com "g" is invalid: spec: Invalid value: size must not exceed limit'),
    # a Required (or NotSupported, TooLong, TooMany, TypeInvalid) error means no CEL rule runs
    ({"limit": 1}, f'Gadget.example.com "g" is invalid: [spec.size: Required value, {NOT_CHECKED}]'),
    ({"size": 30, "color": "green"}, 'Gadget.example.com "g" is invalid: [spec.color: Unsupported value: "green": '
     f'supported values: "red", "blue", {NOT_CHECKED}]'),
    # other schema errors do not stop the rules
    ({"size": 30, "code": "A1"}, "Gadget.example.com \"g\" is invalid: [spec.code: Invalid value: \"A1\": spec.code in "
     "body should match '^[a-z]+$', spec: Invalid value: size must not exceed limit]"),
    ({"size": -1, "tags": ["a", "a"]}, 'Gadget.example.com "g" is invalid: [spec.size: Invalid value: -1: spec.size in '
     'body should be greater than or equal to 0, spec.tags[1]: Duplicate value: "a"]'),
    # embedded resources need apiVersion and kind; their metadata is checked too
    ({"size": 1, "template": {"metadata": {"name": "a/b"}}}, 'Gadget.example.com "g" is invalid: ['
     "spec.template.apiVersion: Required value, spec.template.kind: Required value, "
     "spec.template.metadata.name: Invalid value: \"a/b\": may not contain '/', "
     f"{NOT_CHECKED}]"),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "expected"), CREATE)
def test_create(gadgets: CRD, spec: Any, expected: str) -> None:
    assert message(gadgets, gadget(spec)) == expected


# (spec, API server versions, message): the same requests as earlier API servers answered them.
GADGET = 'Gadget.example.com "g" is invalid: '
NOT_CHECKED_BEFORE_1_34 = NOT_CHECKED.replace("null", '"null"', 1)
BY_VERSION = [
    # Before 1.35 a rule failure showed the schema type as the bad value (apiextensions c558c5206, 518538519).
    ({"size": 30}, ["1.30", "1.34"], GADGET + 'spec: Invalid value: "object": size must not exceed limit'),
    ({"size": 30}, ["1.35", "1.37"], GADGET + "spec: Invalid value: size must not exceed limit"),
    # Before 1.34 a nil bad value printed as the string "null" (apimachinery c58e197e).
    ({"limit": 1}, ["1.30", "1.33"], GADGET + f"[spec.size: Required value, {NOT_CHECKED_BEFORE_1_34}]"),
    ({"limit": 1}, ["1.34", "1.37"], GADGET + f"[spec.size: Required value, {NOT_CHECKED}]"),
    # Before 1.34 an embedded resource's missing apiVersion and kind said "must not be empty" (apiextensions f0841a757).
    (
        {"size": 1, "template": {}},
        ["1.33"],
        GADGET + "[spec.template.apiVersion: Required value: must not be empty, "
        f"spec.template.kind: Required value: must not be empty, {NOT_CHECKED_BEFORE_1_34}]",
    ),
    (
        {"size": 1, "template": {}},
        ["1.34"],
        GADGET + f"[spec.template.apiVersion: Required value, spec.template.kind: Required value, {NOT_CHECKED}]",
    ),
]


@pytest.mark.parametrize(("version", "detail"), [
    ("1.31", "must have at most 262144 bytes"), ("1.32", "may not be more than 262144 bytes"),
])  # fmt: skip
def test_the_annotation_size_limit_text_follows_the_version(gadgets: CRD, version: str, detail: str) -> None:
    """TooLong said "must have at most N bytes" before 1.32 (apimachinery 51cdbebd); OpenAPI maxLength did not."""
    obj = gadget({"size": 1}, annotations={"a": "x" * 262144})
    assert message(gadgets, obj, k8s_version=version).startswith(
        GADGET + f"[metadata.annotations: Too long: {detail}, "
    )


@pytest.mark.parametrize(("spec", "versions", "expected"), BY_VERSION)
def test_each_api_server_version_answers_with_its_texts(
    gadgets: CRD, spec: Any, versions: list[str], expected: str
) -> None:
    for version in versions:
        assert message(gadgets, gadget(spec), k8s_version=version) == expected, version


def test_an_unsupported_version_is_refused(gadgets: CRD) -> None:
    with pytest.raises(ValueError, match="kcel answers as Kubernetes 1.30 to 1.37"):
        message(gadgets, gadget({"size": 1}), k8s_version="1.29")


def test_the_stored_object_is_pruned_and_defaulted(gadgets: CRD) -> None:
    obj = {**gadget({"size": 1, "extra": 1}, labels={}), "status": {"phase": "Ready"}}
    result = validate_object(gadgets, obj, field_validation="Ignore")
    assert (result.message, result.object) == ("", {
        "apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "default"},
        "spec": {"size": 1, "limit": 10},
    })  # fmt: skip


def test_unknown_and_duplicate_fields_follow_field_validation(gadgets: CRD) -> None:
    obj = gadget({"size": 1, "extra": 1}, bogus=2)
    duplicate = ('yaml: unmarshal errors:\n  line 5: key "size" already set in map',)
    strict = validate_object(gadgets, obj, strict_errors=duplicate)
    assert (strict.reason, strict.message) == (
        "BadRequest",
        (
            'Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: yaml: unmarshal errors:\n'
            '  line 5: key "size" already set in map, unknown field "metadata.bogus", unknown field "spec.extra"'
        ),
    )
    warned = validate_object(gadgets, obj, strict_errors=duplicate, field_validation="Warn")
    assert (warned.message, warned.warnings) == (
        "",
        ['line 5: key "size" already set in map', 'unknown field "metadata.bogus"', 'unknown field "spec.extra"'],
    )
    assert validate_object(gadgets, obj, field_validation="Ignore").warnings == []


def test_metadata_is_read_as_object_meta(gadgets: CRD) -> None:
    assert message(gadgets, gadget({"size": 1}, labels={"a": 1})) == (
        'Gadget in version "v1" cannot be handled as a Gadget: json: cannot unmarshal number into Go struct field '
        "ObjectMeta.labels of type string"
    )
    assert message(gadgets, gadget({"size": 1}, name="Bad_Name", labels={"-x": "y"})) == (
        'Gadget.example.com "Bad_Name" is invalid: [metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 '
        "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), metadata.labels: Invalid value: \"-x\": "
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]"
    )
    generated = validate_object(gadgets, {**gadget({"size": 1}), "metadata": {"generateName": "g-"}})
    assert (generated.message, generated.object["metadata"]["name"]) == ("", "g-xxxxx")


def test_decode_object_meta() -> None:
    meta, unknown = decode_object_meta({"name": "a", "annotations": {}, "finalizers": ["f"], "x": {"y": 1},
                                        "ownerReferences": [{"name": "o", "z": 1}]})  # fmt: skip
    assert meta == {"name": "a", "creationTimestamp": None, "ownerReferences": [
        {"apiVersion": "", "kind": "", "name": "o", "uid": ""}], "finalizers": ["f"]}  # fmt: skip
    assert unknown == ["metadata.ownerReferences[0].z", "metadata.x"]
    with pytest.raises(MetadataError, match="Go struct field OwnerReference.ownerReferences.controller of type bool"):
        decode_object_meta({"ownerReferences": [{"controller": "yes"}]})


def test_updates_ratchet_unchanged_values_and_keep_names(gadgets: CRD) -> None:
    old = gadget({"size": 1, "code": "A1"})
    assert message(gadgets, gadget({"size": 2, "code": "A1"}), old) == ""
    assert message(gadgets, gadget({"size": 2, "code": "B1"}), old) == (
        'Gadget.example.com "g" is invalid: spec.code: Invalid value: "B1": spec.code in body should match \'^[a-z]+$\''
    )
    assert message(gadgets, {**gadget({"size": 1, "code": "A1"}), "metadata": {"name": "h"}}, old) == (
        'Gadget.example.com "h" is invalid: metadata.name: Invalid value: "h": field is immutable'
    )


def test_status_updates_validate_the_status_only(gadgets: CRD) -> None:
    old = gadget({"size": 1})
    new = {**gadget({"size": 99}), "status": {"phase": "Gone"}}
    assert message(gadgets, new, old, subresource="status") == (
        'Gadget.example.com "g" is invalid: [status.phase: Unsupported value: "Gone": supported values: "Ready", '
        f'"Pending", {NOT_CHECKED}]'
    )
    assert (
        message(gadgets, new, old)
        == 'Gadget.example.com "g" is invalid: spec: Invalid value: size must not exceed limit'
    )


def test_cluster_scoped_objects_lose_their_namespace(gadgets: CRD) -> None:
    (crd,) = load_crds(GADGETS.replace("scope: Namespaced", "scope: Cluster"))
    result = validate_object(crd, gadget({"size": 1}, namespace="x"))
    assert (result.message, result.object["metadata"]) == ("", {"name": "g"})


def test_a_version_without_a_schema_keeps_everything() -> None:
    (crd,) = load_crds(GADGETS.split("    schema:")[0])
    result = validate_object(crd, gadget({"anything": [1, {"goes": True}]}))
    assert (result.message, result.object["spec"]) == ("", {"anything": [1, {"goes": True}]})


def test_bad_requests(gadgets: CRD) -> None:
    with pytest.raises(ValueError, match="field validation must be one of"):
        validate_object(gadgets, gadget({}), field_validation="strict")
    with pytest.raises(ValueError, match="needs the old object"):
        validate_object(gadgets, gadget({}), subresource="status")


@pytest.mark.parametrize(("version", "what", "unit"), [("1.34", "a qualified name", "characters"),
                                                        ("1.35", "a valid label key", "bytes")])  # fmt: skip
def test_label_texts_follow_the_version(gadgets: CRD, version: str, what: str, unit: str) -> None:
    """util/validation's IsQualifiedName and IsValidLabelValue gave way to content.IsLabelKey/IsLabelValue in 1.35."""
    obj = gadget({"size": 1}, labels={"a/b/c": "v", "k": "x" * 64})
    text = message(gadgets, obj, k8s_version=version)
    assert f'metadata.labels: Invalid value: "a/b/c": {what} must consist of' in text
    assert f'metadata.labels: Invalid value: "{"x" * 64}": must be no more than 63 {unit}' in text


OWNERS = [
    {"apiVersion": "", "kind": "", "name": "", "uid": "u2"},
    {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u1", "controller": True},
    {"apiVersion": "apps/v1", "kind": "A", "name": "a", "uid": "u", "controller": True},
]
OWNER_JSON = (
    '[{"apiVersion":"","kind":"","name":"","uid":"u2"},'
    '{"apiVersion":"v1","kind":"Event","name":"e","uid":"u1","controller":true},'
    '{"apiVersion":"apps/v1","kind":"A","name":"a","uid":"u","controller":true}]'
)
OWNER_GO = (
    "v1.OwnerReference{{APIVersion:{}, Kind:{}, Name:{}, UID:{}, Controller:{}, BlockOwnerDeletion:(*bool)(nil)}}"
)
SET = "(*bool)(0xc000000000)"  # Go prints the pointer's address, different every run
ONE_CONTROLLER = 'Only one reference can have Controller set to true. Found "true" in references for Event/e and A/a'
BY_VERSION_OWNERS = [
    ("1.33", [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
        "metadata.ownerReferences: Invalid value: " + OWNER_GO.format('"v1"', '"Event"', '"e"', '"u1"', SET)
        + ": /v1, Kind=Event is disallowed from being an owner",
        "metadata.ownerReferences: Invalid value: []v1.OwnerReference{"
        + ", ".join([OWNER_GO.format('""', '""', '""', '"u2"', "(*bool)(nil)"),
                     OWNER_GO.format('"v1"', '"Event"', '"e"', '"u1"', SET),
                     OWNER_GO.format('"apps/v1"', '"A"', '"a"', '"u"', SET)])
        + "}: " + ONE_CONTROLLER,
    ]),
    ("1.36", [
        'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
        'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
        'metadata.ownerReferences.name: Invalid value: "": must not be empty',
        'metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u1",'
        '"controller":true}: /v1, Kind=Event is disallowed from being an owner',
        f"metadata.ownerReferences: Invalid value: {OWNER_JSON}: {ONE_CONTROLLER}",
    ]),
    ("1.37", [
        "metadata.ownerReferences[0].apiVersion: Required value: must not be empty",
        "metadata.ownerReferences[0].kind: Required value: must not be empty",
        "metadata.ownerReferences[0].name: Required value: must not be empty",
        'metadata.ownerReferences[1]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u1",'
        '"controller":true}: /v1, Kind=Event is disallowed from being an owner',
        f"metadata.ownerReferences: Invalid value: {OWNER_JSON}: {ONE_CONTROLLER}",
    ]),
]  # fmt: skip


@pytest.mark.parametrize(("version", "expected"), BY_VERSION_OWNERS)
def test_owner_references_as_each_version_checks_them(gadgets: CRD, version: str, expected: list[str]) -> None:
    """apimachinery 5937fdff (1.34) dropped the field names from the details, 5c912ee7 (1.37) indexed the paths and
    made empty fields Required; before 1.34 references printed in Go syntax (pointer addresses stand in)."""
    result = validate_object(gadgets, gadget({"size": 1}, ownerReferences=OWNERS), k8s_version=version)
    assert [str(e) for e in result.errors if str(e.field).startswith("metadata.")] == expected


def test_finalizers_before_1_34_print_as_a_go_string_slice(gadgets: CRD) -> None:
    obj = gadget({"size": 1}, finalizers=["orphan", "foregroundDeletion"])
    found = [validate_object(gadgets, obj, k8s_version=v).errors[0].body() for v in ("1.33", "1.34")]
    both = "finalizer orphan and foregroundDeletion cannot be both set"
    assert found == [
        f'Invalid value: []string{{"orphan", "foregroundDeletion"}}: {both}',
        f'Invalid value: ["orphan","foregroundDeletion"]: {both}',
    ]


@pytest.mark.parametrize(("version", "expected"), [
    ("1.36", ['metadata.managedFields[0].operation: Invalid value: "": must be `Apply` or `Update`',
              'metadata.managedFields[1].operation: Invalid value: "Patch": must be `Apply` or `Update`']),
    ("1.37", ["metadata.managedFields[0].operation: Required value: must not be empty",
              'metadata.managedFields[1].operation: Unsupported value: "Patch": supported values: "Apply", "Update"']),
])  # fmt: skip
def test_managed_field_operations_as_each_version_checks_them(gadgets: CRD, version: str, expected: list[str]) -> None:
    obj = gadget({"size": 1}, managedFields=[{"manager": "a"}, {"manager": "b", "operation": "Patch"}])
    result = validate_object(gadgets, obj, k8s_version=version)
    assert [str(e) for e in result.errors if str(e.field).startswith("metadata.")] == expected


@pytest.mark.parametrize(("version", "dotted"), [
    ("1.31", "prefer a domain-qualified finalizer name to avoid"),
    ("1.32", "prefer a domain-qualified finalizer name including a path (/) to avoid"),
])  # fmt: skip
def test_added_finalizers_without_a_path_get_a_warning(gadgets: CRD, version: str, dotted: str) -> None:
    """WarningsOnCreate/WarningsOnUpdate (apiextensions registry/customresource validator.go; 08ef780a3 in 1.32)."""
    obj = gadget({"size": 1}, finalizers=["example.com", "cleanup", "example.com/cleanup", "orphan"])
    tail = "conflicts with other finalizer writers"
    assert validate_object(gadgets, obj, k8s_version=version).warnings == [
        f'metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental {tail}',
        f'metadata.finalizers: "example.com": {dotted} accidental {tail}',
    ]
    old = gadget({"size": 1}, finalizers=["cleanup", "example.com"])
    assert validate_object(gadgets, obj, old, k8s_version=version).warnings == []  # only added ones
