"""CustomResourceDefinitions as the API server sees them: loading, and the rule checks at CRD create/update.

`load_crds` reads CRD manifests (YAML or JSON, several documents, `List`s). `validate_crd` runs the
`x-kubernetes-validations` checks of k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation
(`ValidateCustomResourceDefinitionOpenAPISchema` and its CEL part), with the field paths of the internal CRD
the API server validates. Objects go through a CRD in `kcel.k8s.crds.objects`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path as FilePath
from typing import Any

from kcel.k8s import field as fe
from kcel.k8s.customresources.formats import unrecognized_format
from kcel.k8s.environment import LATEST, Version, server_version
from kcel.k8s.manifests.decoding import Document, decode_documents
from kcel.k8s.rules.cost import (
    STATIC_ESTIMATED_COST_LIMIT,
    Multiplier,
    TotalCost,
    child_cardinality,
    cost_error_message,
    max_elements,
    times_cardinality,
)
from kcel.k8s.rules.fieldpath import FieldPathError, valid_field_path
from kcel.k8s.rules.validation import CompiledRule, ExpressionCost, RuleEnvironments, Validator, compile_rules
from kcel.k8s.schemas.decltypes import DeclType, schema_decl_type
from kcel.k8s.schemas.escaping import escape
from kcel.k8s.schemas.schema import Schema, SchemaError, ValidationRule

API_GROUP = "apiextensions.k8s.io"
SUPPORTED_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
# Go's strings.TrimSpace (unicode.IsSpace); Python's str.strip() would also drop U+001C..U+001F.
GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"

# --- the model -------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CRDVersion:
    """One entry of `spec.versions`; `schema` is its own `schema.openAPIV3Schema` (None when absent)."""

    name: str
    served: bool
    storage: bool
    schema: Schema | None = field(repr=False)
    status_subresource: bool = False
    raw_schema: Any = field(default=None, repr=False)  # `schema` as written: identical ones move to spec.validation


@dataclass(frozen=True, eq=False)
class CRD:
    """A CustomResourceDefinition; `validation` is the top-level `spec.validation.openAPIV3Schema` (v1beta1)."""

    name: str
    group: str
    kind: str
    plural: str
    scope: str
    versions: tuple[CRDVersion, ...]
    validation: Schema | None = field(default=None, repr=False)
    api_version: str = f"{API_GROUP}/v1"
    source: str = ""  # `<file>: document <n>`, for messages
    file: str = ""  # where the document is, for annotations (`-o github`): the file, its first line, its number
    line: int = 0
    document: int = 0
    origins: Any = field(default=None, repr=False)  # where each field was written, when kustomize patches made the
    # CRD (kcel.k8s.kustomize.traces.Origins: `locate(elements)` -> file, document, elements); None: all in `file`
    # a CRD derived from Go types (kcel.k8s.gotypes): each rule's marker, by the manifest path of the rule's field
    # (`spec`, `versions`, `0`, ..., `rule`); None for a CRD read from a manifest
    rule_origins: Mapping[tuple[str, ...], Any] | None = field(default=None, repr=False)
    _validators: dict[tuple[str, Version], Validator] = field(default_factory=dict, repr=False)

    @property
    def kind_group(self) -> str:
        """The qualified kind a 422 status names (`Widget.example.com`)."""
        return f"{self.kind}.{self.group}"

    def version(self, name: str) -> CRDVersion:
        for version in self.versions:
            if version.name == name:
                return version
        raise KeyError(f"{self.name} has no version {name!r}")

    def schema_of(self, version: CRDVersion) -> Schema | None:
        """The schema objects of this version are validated against (per-version or top-level)."""
        return version.schema if version.schema is not None else self.validation

    def validator(self, version: CRDVersion, server: Version = LATEST) -> Validator:
        """The compiled rules for objects of a version, built once per API server version: objects use the
        stored-expressions environment."""
        key = (version.name, server)
        if key not in self._validators:
            schema = self.schema_of(version) or Schema()
            k8s_version = f"{server[0]}.{server[1]}"
            self._validators[key] = Validator(
                schema, is_resource_root=True, environment="stored", k8s_version=k8s_version
            )
        return self._validators[key]


# --- loading ---------------------------------------------------------------------------------------------


class CRDLoadError(ValueError):
    """A manifest that cannot be read as CRDs; the message names the file, the document and the field path."""


def load_crds(source: str | os.PathLike[str]) -> list[CRD]:
    """Read every CRD in a file (or in YAML/JSON text: a str with a line break, or naming no file).

    Documents of other kinds are skipped; `List`s are read item by item.

    Raises:
        CRDLoadError: e.g. `crds.yaml: document 2: spec.versions[0].name: must be a string`.

    Examples:
        >>> text = '''apiVersion: apiextensions.k8s.io/v1
        ... kind: CustomResourceDefinition
        ... metadata: {name: widgets.example.com}
        ... spec:
        ...   group: example.com
        ...   names: {kind: Widget, plural: widgets}
        ...   scope: Namespaced
        ...   versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
        ... '''
        >>> [(crd.kind_group, crd.versions[0].name) for crd in load_crds(text)]
        [('Widget.example.com', 'v1')]
    """
    name, text = _read_source(source)
    return crds_in(name, decode_documents(text, name))


def crds_in(name: str, documents: Sequence[Document]) -> list[CRD]:
    """The CRDs among the decoded documents of the file `name` (Lists read item by item).

    Raises:
        CRDLoadError: a document that did not decode (the first), or a CRD that cannot be read, naming its
            document and field.
    """
    for document in documents:
        if document.error:
            raise CRDLoadError(document.error)
    crds: list[CRD] = []
    for document in documents:
        found = _crds_in(document.value, f"{name}: document {document.index}", "")
        crds.extend(replace(crd, file=name, line=document.line, document=document.index) for crd in found)
    return crds


def load_documents(source: str | os.PathLike[str]) -> list[Any]:
    """Every document of a YAML/JSON file (or text), decoded as the API server decodes manifests.

    Raises:
        CRDLoadError: the file cannot be read or parsed; the message names the file, line and column.
    """
    return [document.value for document in _documents(*_read_source(source))]


def load_manifests(source: str | os.PathLike[str]) -> list[Document]:
    """Every document of a file, each with its own decoding error (so one bad document does not hide the rest)
    and the duplicate fields strict decoding would reject.

    Raises:
        CRDLoadError: the file cannot be read.
    """
    return decode_documents(*reversed(_read_source(source)))


def _read_source(source: str | os.PathLike[str]) -> tuple[str, str]:
    if isinstance(source, str) and ("\n" in source or not os.path.isfile(source)):
        return "<text>", source
    try:
        path = source if isinstance(source, FilePath) else FilePath(source)  # `-` (kcel.k8s.manifests.files.STDIN)
        return os.fspath(source), path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise CRDLoadError(f"{os.fspath(source)}: cannot read: {err}") from None


def _documents(name: str, text: str) -> list[Document]:
    documents = decode_documents(text, name)
    for document in documents:
        if document.error:
            raise CRDLoadError(document.error)
    return documents


def crds_of(documents: Iterable[Any]) -> list[CRD]:
    """The CustomResourceDefinitions among already decoded objects; ones that cannot be read are left out."""
    found = []
    for i, document in enumerate(documents):
        try:
            found += _crds_in(document, f"object {i}", "")
        except CRDLoadError:
            continue
    return found


def _crds_in(document: Any, where: str, prefix: str) -> list[CRD]:
    if document is None:
        return []  # an empty document
    doc = _Fields(document, where, prefix)
    kind = doc.string("kind", required=False)
    if kind == "List" or (kind.endswith("List") and "items" in doc.data):
        return [crd for i, item in doc.items("items") for crd in _crds_in(item, where, doc.at("items", i) + ".")]
    if kind != "CustomResourceDefinition":
        return []
    return [_crd(doc, where)]


def _crd(doc: _Fields, where: str) -> CRD:
    api_version = doc.string("apiVersion")
    if api_version not in (f"{API_GROUP}/v1", f"{API_GROUP}/v1beta1"):
        raise doc.error("apiVersion", f"unsupported CustomResourceDefinition version {api_version!r}")
    spec = doc.mapping("spec")
    names = spec.mapping("names")
    validation = spec.optional_mapping("validation")
    status_everywhere = _has_status(spec)
    versions = [_version(v, status_everywhere) for _, v in spec.mappings("versions")]
    if not versions and spec.string("version", required=False):  # v1beta1's single-version form
        versions = [CRDVersion(spec.string("version"), True, True, None, status_everywhere)]
    return CRD(
        name=doc.mapping("metadata").string("name"),
        group=spec.string("group"),
        kind=names.string("kind"),
        plural=names.string("plural"),
        scope=spec.string("scope"),
        versions=tuple(versions),
        validation=validation.schema("openAPIV3Schema") if validation is not None else None,
        api_version=api_version,
        source=where,
    )


def _version(data: _Fields, status_everywhere: bool) -> CRDVersion:
    schema = data.optional_mapping("schema")
    return CRDVersion(
        name=data.string("name"),
        served=data.flag("served"),
        storage=data.flag("storage"),
        schema=schema.schema("openAPIV3Schema") if schema is not None else None,
        status_subresource=status_everywhere or _has_status(data),
        raw_schema=data.data.get("schema"),
    )


def _has_status(data: _Fields) -> bool:
    subresources = data.optional_mapping("subresources")
    return subresources is not None and subresources.data.get("status") is not None


@dataclass(frozen=True)
class _Fields:
    """A JSON object being read, with where it is, so that every error can name its field path."""

    data: Any
    where: str
    path: str

    def __post_init__(self) -> None:
        if not isinstance(self.data, Mapping):
            raise CRDLoadError(f"{self.where}: {self.path.rstrip('.') or '<root>'}: must be an object")

    def at(self, key: str, index: int | None = None) -> str:
        return f"{self.path}{key}" + (f"[{index}]" if index is not None else "")

    def error(self, key: str, problem: str) -> CRDLoadError:
        return CRDLoadError(f"{self.where}: {self.at(key)}: {problem}")

    def string(self, key: str, required: bool = True) -> str:
        value = self.data.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str):
            raise self.error(key, "required" if value is None else "must be a string")
        return value

    def flag(self, key: str) -> bool:
        value = self.data.get(key, False)
        if not isinstance(value, bool):
            raise self.error(key, "must be a boolean")
        return value

    def mapping(self, key: str) -> _Fields:
        if self.data.get(key) is None:
            raise self.error(key, "required")
        return _Fields(self.data[key], self.where, self.at(key) + ".")

    def optional_mapping(self, key: str) -> _Fields | None:
        return self.mapping(key) if self.data.get(key) is not None else None

    def items(self, key: str) -> list[tuple[int, Any]]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(key, "must be an array")
        return list(enumerate(value))

    def mappings(self, key: str) -> Iterator[tuple[int, _Fields]]:
        for i, item in self.items(key):
            yield i, _Fields(item, self.where, self.at(key, i) + ".")

    def schema(self, key: str) -> Schema | None:
        if self.data.get(key) is None:
            return None
        try:
            return Schema.from_json(self.data[key], self.at(key))
        except SchemaError as err:
            raise CRDLoadError(f"{self.where}: {err}") from None


# --- checks at CRD create/update -------------------------------------------------------------------------


@dataclass(frozen=True)
class CRDCheck:
    """What the API server's CRD checks find about rules: the errors, and each expression's estimated cost."""

    errors: list[fe.FieldError]
    costs: list[ExpressionCost]
    totals: list[tuple[fe.Path, int]]  # each schema's path and the sum of its expressions' costs
    warnings: list[str] = field(default_factory=list)  # WarningsOnCreate/Update, when the CRD is accepted


def validate_crd(crd: CRD, old: CRD | None = None, *, k8s_version: str | None = None) -> list[fe.FieldError]:
    """The errors the API server gives for a CRD's `x-kubernetes-validations` on create (or update from `old`);
    `k8s_version` names the API server (default the newest; ValueError outside the supported versions).

    Only checks about rules are made (and the structural rule that forbids them under allOf/anyOf/oneOf/not).
    Expressions new in this CRD compile in the NewExpressions environment; on update, expressions the old CRD
    already had compile in the StoredExpressions one. Each rule's estimated cost (times how often it can run) and
    each messageExpression's must stay within 10,000,000, and all of a schema's within 100,000,000; on update a
    version whose schema is unchanged is only held to the total.

    Example:
        >>> crd = load_crds('''{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        ...   "metadata": {"name": "ws.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
        ...   "names": {"kind": "W", "plural": "ws"}, "versions": [{"name": "v1", "served": true, "storage": true,
        ...   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-validations": [{"rule": " "}]}}}]}}''')[0]
        >>> [str(e) for e in validate_crd(crd)]
        ['spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Required value: rule is not specified']
    """
    return check_crd(crd, old, k8s_version=k8s_version).errors


def check_crd(crd: CRD, old: CRD | None = None, *, k8s_version: str | None = None) -> CRDCheck:
    """`validate_crd`, with the estimated cost of every rule and messageExpression kept for reports."""
    with fe.answering_as(server_version(k8s_version)):
        return _check_crd(crd, old, k8s_version)


def _check_crd(crd: CRD, old: CRD | None, k8s_version: str | None) -> CRDCheck:
    envs = _Environments(RuleEnvironments(k8s_version, "new"), RuleEnvironments(k8s_version, "stored"))
    if old is not None:
        rules, messages = _expressions(old)
        envs = replace(envs, preexisting=rules, preexisting_messages=messages)
    unchanged = _unchanged_versions(crd, old) if old is not None else frozenset()
    errors: list[fe.FieldError] = []
    costs: list[ExpressionCost] = []
    totals: list[tuple[fe.Path, int]] = []
    for path, schema in internal_schemas(crd):
        check = _SchemaCheck(envs, _version_name(crd, path) in unchanged)
        errors += check.run(schema, path)
        costs += check.costs
        totals.append((path, check.total_cost.total))
    warnings = [] if errors else _format_warnings(crd, old)
    return CRDCheck(errors, costs, totals, warnings)


def _format_warnings(crd: CRD, old: CRD | None) -> list[str]:
    """`unrecognized format "..."` for each schema node whose format the API server does not know; on update only
    formats the old CRD did not already have (upstream's WarningsOnCreate/WarningsOnUpdate)."""
    before = set(_unrecognized_formats(old)) if old is not None else set()
    warnings = [f"unrecognized format {fe.quote(name)}" for name in _unrecognized_formats(crd) if name not in before]
    if fe.api_server() >= (1, 37):  # apiextensions 791b2c6f4: sets of objects or arrays, sorted, new ones only
        known = set(_sets_of_compounds(old)) if old is not None else set()
        warnings += sorted(set(_sets_of_compounds(crd)) - known)
    return warnings


def _all_schemas(crd: CRD) -> Iterator[Schema]:
    """Every schema node of the internal CRD, depth first in declaration order (Go's walk order is random)."""
    for _, schema in internal_schemas(crd):
        yield from _nodes(schema)


def _unrecognized_formats(crd: CRD) -> list[str]:
    server = fe.api_server()
    return [s.format for s in _all_schemas(crd) if s.format and unrecognized_format(s.type or "", s.format, server)]


def _sets_of_compounds(crd: CRD) -> list[str]:
    return [
        f"x-kubernetes-list-type: set for items of type {fe.quote(s.items.type)} is not supported by server-side "
        "apply or CEL validation rules"
        for s in _all_schemas(crd)
        if s.list_type == "set" and isinstance(s.items, Schema) and s.items.type in ("object", "array")
    ]


def _unchanged_versions(crd: CRD, old: CRD) -> frozenset[str]:
    """Versions whose schema an update leaves as it was (their rules were accepted before)."""
    before = {v.name: v.raw_schema for v in old.versions}
    return frozenset(v.name for v in crd.versions if v.name in before and before[v.name] == v.raw_schema)


def _version_name(crd: CRD, path: fe.Path) -> str:
    """The version a schema path belongs to; `spec.validation` counts as the first version (`spec.version`)."""
    text = str(path)
    for i, version in enumerate(crd.versions):
        if text.startswith(f"spec.versions[{i}]"):
            return version.name
    return crd.versions[0].name if crd.versions else ""


def internal_schemas(crd: CRD) -> list[tuple[fe.Path, Schema]]:
    """The schemas of the internal CRD the API server validates, with their paths.

    Converting a v1 CRD to the internal version moves `versions[*].schema` to `spec.validation` when all
    versions have identical schemas (a single version always does), so errors then name `spec.validation`.
    """
    spec = fe.Path.new("spec")
    raw = [version.raw_schema for version in crd.versions]
    if crd.api_version.endswith("/v1") and raw and all(r == raw[0] for r in raw):
        schema = crd.versions[0].schema
        return [(spec.child("validation", "openAPIV3Schema"), schema)] if schema is not None else []
    found = [
        (spec.child("versions").index(i).child("schema", "openAPIV3Schema"), version.schema)
        for i, version in enumerate(crd.versions)
        if version.schema is not None
    ]  # upstream checks the versions first, then spec.validation
    return found + ([(spec.child("validation", "openAPIV3Schema"), crd.validation)] if crd.validation else [])


@dataclass(frozen=True)
class _Environments:
    """Where each expression compiles: text the old CRD already had uses the stored environment."""

    new: RuleEnvironments
    stored: RuleEnvironments
    preexisting: frozenset[str] = frozenset()
    preexisting_messages: frozenset[str] = frozenset()

    def for_rule(self, text: str) -> RuleEnvironments:
        return self.stored if text in self.preexisting else self.new

    def for_message(self, text: str) -> RuleEnvironments:
        return self.stored if text in self.preexisting_messages else self.new


def _expressions(old: CRD) -> tuple[frozenset[str], frozenset[str]]:
    """The rule and messageExpression texts an existing CRD holds. Before 1.31 the API server collected the rule
    texts as the old messageExpressions too (apiextensions 5d129eee2 fixed it), so an unchanged messageExpression
    counted as stored only if some old rule read the same."""
    rules: set[str] = set()
    messages: set[str] = set()
    schemas = [old.validation, *(v.schema for v in old.versions)]
    for rule in (rule for schema in schemas for rule in _all_rules(schema)):
        rules.add(rule.rule)
        if rule.message_expression:
            messages.add(rule.message_expression if fe.api_server() >= (1, 31) else rule.rule)
    return frozenset(rules), frozenset(messages)


def _all_rules(schema: Schema | None) -> Iterator[ValidationRule]:
    """Every rule anywhere in a schema, nested value validations included."""
    for node in _nodes(schema):
        yield from node.validations


def _nodes(schema: Schema | None) -> Iterator[Schema]:
    """A schema and every node below it, depth first in declaration order, value validations included."""
    if schema is not None:
        yield schema
        for child in _children(schema):
            yield from _nodes(child)


def _children(schema: Schema) -> Iterator[Schema]:
    yield from (schema.properties or {}).values()
    for child in (schema.items, schema.additional_properties, schema.not_):
        if isinstance(child, Schema):
            yield child
    yield from (*schema.all_of, *schema.any_of, *schema.one_of)


def count_rules(schema: Schema | None) -> int:
    """How many `x-kubernetes-validations` entries a schema holds, anywhere in it."""
    return sum(1 for _ in _all_rules(schema))


class _TypeInfoError(Exception):
    pass


_TypeInfo = tuple[Schema, DeclType | None]


class _CelContext:
    """Upstream `CELSchemaContext`: the type rules at a node see, taken from the parent's type where it can be.

    A node outside any rule's scope has no type info; a node whose parent has none converts its own schema
    (as a resource root at the top or where `x-kubernetes-embedded-resource` is set).
    """

    def __init__(
        self,
        schema: Schema,
        parent: _CelContext | None = None,
        access: Callable[[_TypeInfo], _TypeInfo | None] | None = None,
    ) -> None:
        self.schema, self.parent, self.access = schema, parent, access
        self.in_scope: bool = bool(schema.validations) or (parent is not None and parent.in_scope)
        self._info: _TypeInfo | _TypeInfoError | None = None
        self.location = ""  # where the data is: `spec.containers[*]`
        self.cardinality = 1 if parent is None else _child_cardinality(parent)
        """How many times the node can occur: the product of maxItems/maxProperties above it; None if unbounded."""

    def child(self, schema: Schema, access: Callable[[_TypeInfo], _TypeInfo | None], step: str) -> _CelContext:
        """The context of a child node; `step` is how data reaches it (`.name`, or `[*]` for items and values)."""
        child = _CelContext(schema, self, access)
        child.location = self.location + step
        return child

    def multipliers(self) -> tuple[Multiplier, ...]:
        """The lists and maps above this node, outermost first: each one multiplies how often it occurs."""
        found: list[Multiplier] = []
        node = self
        while node.parent is not None:
            parent = node.parent
            if max_elements(parent.schema) != 1:
                found.append(Multiplier(parent.location or "<root>", parent.schema))
            node = parent
        return tuple(reversed(found))

    def type_info(self) -> _TypeInfo | None:
        if not self.in_scope:
            return None
        if self._info is None:
            try:
                self._info = self._compute()
            except _TypeInfoError as err:
                self._info = err
        if isinstance(self._info, _TypeInfoError):
            raise self._info
        return self._info

    def _compute(self) -> _TypeInfo:
        if self.parent is not None:
            parent = self.parent.type_info()
            found = self.access(parent) if parent is not None and self.access is not None else None
            if found is not None:
                return found
        decl = schema_decl_type(self.schema, self.parent is None or self.schema.embedded_resource)
        if decl is None:
            raise _TypeInfoError("unable to convert structural schema to CEL declarations")
        return self.schema, decl


def _child_cardinality(parent: _CelContext) -> int | None:
    return child_cardinality(parent.cardinality, max_elements(parent.schema))


def _property_access(name: str) -> Callable[[_TypeInfo], _TypeInfo | None]:
    def access(info: _TypeInfo) -> _TypeInfo | None:
        schema, decl = info
        escaped = escape(name)
        if schema.properties is None or escaped is None or decl is None or escaped not in decl.fields:
            return None  # unescapable names and invisible types are absent from the parent's type
        return schema.properties[name], decl.fields[escaped].type

    return access


def _items_access(info: _TypeInfo) -> _TypeInfo | None:
    schema, decl = info
    return (schema.items, decl.elem if decl is not None else None) if schema.items is not None else None


def _values_access(info: _TypeInfo) -> _TypeInfo | None:
    schema, decl = info
    values = schema.additional_properties
    return (values, decl.elem if decl is not None else None) if isinstance(values, Schema) else None


@dataclass
class _Errors:
    """Upstream `OpenAPISchemaErrorList`: schema errors are all listed before CEL errors."""

    schema: list[fe.FieldError] = field(default_factory=list)
    cel: list[fe.FieldError] = field(default_factory=list)


class _SchemaCheck:
    """The rule checks of one schema, walked as `ValidateCustomResourceDefinitionOpenAPISchema` walks it."""

    def __init__(self, envs: _Environments, suppress_expression_cost: bool = False) -> None:
        self.envs, self.suppress_expression_cost = envs, suppress_expression_cost
        self.errors = _Errors()
        self.total_cost = TotalCost()
        self.costs: list[ExpressionCost] = []  # every rule and messageExpression, for reports

    def run(self, root: Schema, path: fe.Path) -> list[fe.FieldError]:
        structural = sorted(_nested_rule_errors(root, path), key=str)  # ValidateStructural sorts its errors
        self.node(root, path, _CelContext(root) if not structural else None, None)
        total = self.total_cost.errors(path) if not structural else []
        return structural + self.errors.schema + self.errors.cel + total

    def node(self, schema: Schema, path: fe.Path, cel: _CelContext | None, uncorrelatable: fe.Path | None) -> None:
        """Children first, then this node's rules: its CEL is skipped if any schema error was found so far below."""
        schema_errors_before = len(self.errors.schema)
        if isinstance(schema.additional_properties, Schema):
            values = schema.additional_properties
            values_cel = cel and cel.child(values, _values_access, "[*]")
            self.node(values, path.child("additionalProperties"), values_cel, uncorrelatable)
        map_ok = schema.map_type in (None, "granular", "atomic")  # MapIsCorrelatable
        for name, prop in (schema.properties or {}).items():  # upstream: Go map order; here: declaration order
            below = uncorrelatable or (None if map_ok else path)
            prop_cel = cel and cel.child(prop, _property_access(name), f".{name}" if cel.location else name)
            self.node(prop, path.child("properties").key(name), prop_cel, below)
        if schema.not_ is not None:
            self.node(schema.not_, path.child("not"), None, uncorrelatable)
        for word, entries in (("allOf", schema.all_of), ("oneOf", schema.one_of), ("anyOf", schema.any_of)):
            for i, entry in enumerate(entries):
                self.node(entry, path.child(word).index(i), None, uncorrelatable)
        if schema.items is not None:
            below = uncorrelatable or (None if schema.list_type == "map" else path)
            self.node(schema.items, path.child("items"), cel and cel.child(schema.items, _items_access, "[*]"), below)
        if not schema.validations:
            return
        rules_path = path.child("x-kubernetes-validations")
        for i, rule in enumerate(schema.validations):
            self.errors.schema += _rule_field_errors(rule, schema, rules_path.index(i))
        if len(self.errors.schema) == schema_errors_before and cel is not None:
            self.compile(cel, rules_path, uncorrelatable)

    def compile(self, cel: _CelContext, path: fe.Path, uncorrelatable: fe.Path | None) -> None:
        try:
            info = cel.type_info()
        except _TypeInfoError as err:
            message = f"internal error: failed to construct type information for x-kubernetes-validations rules: {err}"
            self.errors.cel.append(fe.internal_error(path, message))
            return
        assert info is not None  # a node with rules is always in a rule's scope
        schema, decl = info
        if decl is None:  # cel.Compile's own error
            self.errors.cel.append(fe.internal_error(path, "failed to convert to declType for CEL validation rules"))
            return
        for i, compiled in enumerate(self.compile_all(schema, decl)):
            self.errors.cel += self.compiled_errors(compiled, path.index(i), cel, uncorrelatable)

    def compile_all(self, schema: Schema, decl: DeclType) -> list[CompiledRule]:
        """Each rule in its environment, with its messageExpression compiled in its own one (upstream compiles
        the messageExpression only after the rule compiled)."""
        results = []
        for rule in schema.validations:
            compiled = compile_rules(schema, decl, self.envs.for_rule(rule.rule), [rule])[0]
            message_envs = self.envs.for_message(rule.message_expression or "")
            mixed = message_envs is not self.envs.for_rule(rule.rule)
            if rule.message_expression and mixed and compiled.error is None:
                alone = compile_rules(
                    schema, decl, message_envs, [ValidationRule("true", message_expression=rule.message_expression)]
                )[0]
                compiled = replace(compiled, message_program=alone.message_program, message_error=alone.message_error)
            results.append(compiled)
        return results

    def compiled_errors(
        self, compiled: CompiledRule, path: fe.Path, cel: _CelContext, uncorrelatable: fe.Path | None
    ) -> list[fe.FieldError]:
        rule = compiled.rule
        where = (cel.location, cel.multipliers())
        cardinality = compiled.max_cardinality if cel.cardinality is None else cel.cardinality
        cost = times_cardinality(compiled.max_cost, cardinality)
        self.costs.append(ExpressionCost(path.child("rule"), compiled, False, cel.cardinality, cost, *where))
        errors = self.cost_errors(path.child("rule"), "estimated rule cost", cost)
        if compiled.error is not None:
            errors.append(fe.invalid(path.child("rule"), _go_rule(rule), compiled.error.detail))
        if compiled.message_error is not None:
            errors.append(fe.invalid(path.child("messageExpression"), _go_rule(rule), compiled.message_error.detail))
        elif compiled.message_program is not None:
            message_path = path.child("messageExpression")
            message_cost = compiled.message_max_cost
            self.costs.append(ExpressionCost(message_path, compiled, True, 1, message_cost, *where))
            errors += self.cost_errors(message_path, "estimated messageExpression cost", message_cost)
        if compiled.uses_old_self:
            if uncorrelatable is not None:
                detail = f"oldSelf cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}"
                errors.append(fe.invalid(path.child("rule"), rule.rule, detail))
        elif rule.optional_old_self is not None:
            detail = "may not be set if oldSelf is not used in rule"
            errors.append(fe.invalid(path.child("optionalOldSelf"), rule.optional_old_self, detail))
        return errors

    def cost_errors(self, path: fe.Path, name: str, cost: int) -> list[fe.FieldError]:
        """The per-expression limit (unless the schema is unchanged), and the cost added to the schema's total."""
        self.total_cost.observe(path, cost)
        if self.suppress_expression_cost or cost <= STATIC_ESTIMATED_COST_LIMIT:
            return []
        return [fe.forbidden(path, cost_error_message(name, cost, STATIC_ESTIMATED_COST_LIMIT))]


def _rule_field_errors(rule: ValidationRule, schema: Schema, path: fe.Path) -> list[fe.FieldError]:
    """The checks of one rule's fields that need no compilation (upstream's "schema errors"). Before 1.34 the
    details of the invalid message and fieldPath started with the field's name (apiextensions 890aa9b3b)."""
    named = fe.api_server() < (1, 34)

    def invalid(name: str, value: str, detail: str) -> fe.FieldError:
        return fe.invalid(path.child(name), value, f"{name} {detail}" if named else detail)

    errors = []
    rule_text, message = rule.rule.strip(GO_SPACE), (rule.message or "").strip(GO_SPACE)
    if not rule_text:
        errors.append(fe.required(path.child("rule"), "rule is not specified"))
    elif rule.message and not message:
        errors.append(invalid("message", rule.message, "must be non-empty if specified"))
    elif _has_line_breaks(message):
        errors.append(invalid("message", rule.message or "", "must not contain line breaks"))
    elif _has_line_breaks(rule_text) and not message:
        errors.append(fe.required(path.child("message"), "message must be specified if rule contains line breaks"))
    if rule.message_expression and not rule.message_expression.strip(GO_SPACE):
        errors.append(fe.required(path.child("messageExpression"), "messageExpression must be non-empty if specified"))
    if rule.reason is not None and rule.reason not in SUPPORTED_REASONS:
        errors.append(fe.not_supported(path.child("reason"), rule.reason, SUPPORTED_REASONS))
    field_path = rule.field_path or ""
    if field_path and not field_path.strip(GO_SPACE):
        errors.append(invalid("fieldPath", field_path, "must be non-empty if specified"))
    if _has_line_breaks(field_path):
        errors.append(invalid("fieldPath", field_path, "must not contain line breaks"))
    if field_path and not _path_valid(field_path, schema):
        errors.append(invalid("fieldPath", field_path, "must be a valid path"))
    return errors


def _has_line_breaks(text: str) -> bool:
    return "\n" in text or "\r" in text


def _path_valid(text: str, schema: Schema) -> bool:
    try:
        valid_field_path(text, schema)
    except FieldPathError:
        return False
    return True


def _go_rule(rule: ValidationRule) -> fe.GoStruct:
    """The internal `ValidationRule` struct as a bad value: it has no JSON tags, so fields keep Go's names."""
    fields = (
        ("Rule", rule.rule), ("Message", rule.message or ""), ("MessageExpression", rule.message_expression or ""),
        ("Reason", rule.reason), ("FieldPath", rule.field_path or ""), ("OptionalOldSelf", rule.optional_old_self),
    )  # fmt: skip
    pointers = (("Reason", "apiextensions.FieldValueErrorReason"), ("OptionalOldSelf", "bool"))
    return fe.GoStruct(fields, "apiextensions.ValidationRule", pointers)


def _nested_rule_errors(schema: Schema, path: fe.Path) -> Iterator[fe.FieldError]:
    """`must be empty to be structural`: rules anywhere under allOf/anyOf/oneOf/not (ValidateStructural)."""
    for word, entries in (("allOf", schema.all_of), ("anyOf", schema.any_of), ("oneOf", schema.one_of)):
        for i, entry in enumerate(entries):
            yield from _rules_in_nested(entry, path.child(word).index(i))
    if schema.not_ is not None:
        yield from _rules_in_nested(schema.not_, path.child("not"))
    for name, prop in (schema.properties or {}).items():
        yield from _nested_rule_errors(prop, path.child("properties").key(name))
    for word, child in (("items", schema.items), ("additionalProperties", schema.additional_properties)):
        if isinstance(child, Schema):
            yield from _nested_rule_errors(child, path.child(word))


def _rules_in_nested(schema: Schema, path: fe.Path) -> Iterator[fe.FieldError]:
    if schema.validations:
        yield fe.forbidden(path.child("x-kubernetes-validations"), "must be empty to be structural")
    yield from _nested_rule_errors(schema, path)
