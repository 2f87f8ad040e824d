"""OpenAPI schema validation of custom resources with the API server's messages (k8s.io/kube-openapi validate).

The walk follows kube-openapi's `SchemaValidator`: at each node the type, allOf/anyOf/oneOf/not, string, format,
number, array, enum and object checks, each where it applies, with its match count (which picks the reported
failures of anyOf/oneOf) and its error texts (`spec.x in body should match '^a$'`). The result becomes field
errors as apiextensions-apiserver's `kubeOpenAPIResultToFieldErrors` makes them: Required, NotSupported (enum),
TooLong, TooMany, TypeInvalid, and Invalid for the rest. On update, errors of a node whose value did not change
are dropped (CRD validation ratcheting, pkg/apiserver/validation/ratcheting.go).

Go walks object properties in map order, which is random; here properties are checked in the order the object
lists them, so the output is the same on every run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from typing import Any

from kcel.gofloat import format_double
from kcel.goregex import GoRegexError, compile_go_regex, search_matches
from kcel.k8s import field as fe
from kcel.k8s.customresources.formats import NUMBER_FORMATS_KEPT, check_format, supported_format
from kcel.k8s.environment import LATEST, Version
from kcel.k8s.schemas.correlation import CorrelatedObject, deep_equal
from kcel.k8s.schemas.schema import Schema
from kcel.temporal import go_quote

IN = "body"  # kube-openapi validates a request body
INT32, INT64 = (-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)
FLOAT32_MAX = 3.4028235677973366e38  # values from here on do not round to a finite float32
MAX_JSON_FLOAT = float(2**53 - 1)


class Code(IntEnum):
    """kube-openapi errors' codes (pkg/validation/errors/schema.go)."""

    INVALID_TYPE = 600
    REQUIRED = 601
    TOO_LONG = 602
    TOO_SHORT = 603
    PATTERN = 604
    ENUM = 605
    MULTIPLE_OF = 606
    MAX = 607
    MIN = 608
    UNIQUE = 609
    MAX_ITEMS = 610
    MIN_ITEMS = 611
    TOO_FEW_PROPERTIES = 613
    TOO_MANY_PROPERTIES = 614
    UNALLOWED_PROPERTY = 615
    MULTIPLE_OF_MUST_BE_POSITIVE = 617


_NO_VALUE: Any = object()


@dataclass(frozen=True, slots=True)
class Problem:
    """One kube-openapi error: an `errors.Validation` (with a code), or a plain error (code None)."""

    message: str
    code: Code | None = None
    name: str = ""  # the path kube-openapi names the value by (`spec.items[0].name`)
    value: Any = _NO_VALUE
    valid: Any = None
    values: tuple[Any, ...] = ()


@dataclass(slots=True)
class Result:
    """validate.Result: errors (without repeated texts) and the match count anyOf/oneOf rank alternatives by."""

    errors: dict[str, Problem] = field(default_factory=dict)
    matches: int = 0

    def add(self, problem: Problem | None) -> None:
        if problem is not None and problem.message not in self.errors:
            self.errors[problem.message] = problem

    def merge(self, other: Result | None) -> None:
        if other is not None:
            self.matches += other.matches
            for message, problem in other.errors.items():
                if message not in self.errors:
                    self.errors[message] = problem


def _failure(problem: Problem) -> Result:
    """errorHelp.sErr: a result holding one error and no match."""
    return Result({problem.message: problem})


# -- the compiled schema ---------------------------------------------------------------------------------


@dataclass(eq=False)
class _Node:
    """What kube-openapi derives from one schema node: its type list, kept format, compiled pattern."""

    schema: Schema
    types: tuple[str, ...]
    format: str
    number_type: str  # the single integer/number type the number checks use ("" otherwise)
    number_format: str
    pattern: Any = None
    pattern_error: str = ""


class OpenAPIValidator:
    """kube-openapi's schema validator for one CRD schema (or a part of it, such as `status`).

    >>> schema = Schema.from_json({"type": "object", "properties": {"spec": {"type": "object", "required": ["a"],
    ...     "properties": {"a": {"type": "string", "pattern": "^[a-z]+$"}, "n": {"type": "integer", "maximum": 3}}}}})
    >>> [str(e) for e in OpenAPIValidator(schema).validate({"spec": {"n": 5}})]
    ['spec.n: Invalid value: 5: spec.n in body should be less than or equal to 3', 'spec.a: Required value']
    """

    def __init__(self, schema: Schema, k8s_version: Version = LATEST) -> None:
        """`k8s_version`: the API server (its version decides which formats are kept and checked)."""
        self.schema = schema
        self.version = k8s_version
        self._nodes: dict[int, _Node] = {}

    def validate(
        self, obj: Any, old: Any = None, *, path: fe.Path | None = None, ratcheting: bool = True
    ) -> list[fe.FieldError]:
        """Field errors for `obj` (an update when `old` is given: unchanged values are ratcheted)."""
        correlation = CorrelatedObject(obj, old, self.schema) if old is not None and ratcheting else None
        return self.validate_correlated(obj, correlation, path=path)

    def validate_correlated(
        self, obj: Any, correlation: CorrelatedObject | None, *, path: fe.Path | None = None
    ) -> list[fe.FieldError]:
        """Like `validate`, with the old value given as a correlation (shared with the CEL rules' ratcheting)."""
        result = _Walk(self, correlation is not None).value(self.schema, obj, "", correlation)
        return to_field_errors(path or fe.Path(), result)

    def node(self, schema: Schema) -> _Node:
        found = self._nodes.get(id(schema))
        if found is None:
            found = self._nodes[id(schema)] = self._compile(schema)
        return found

    def _compile(self, schema: Schema) -> _Node:
        types = ("integer", "string") if schema.int_or_string else ((schema.type,) if schema.type else ())
        kept = supported_format(schema.type if len(types) == 1 else "", schema.format, self.version)
        number_type = types[0] if len(types) == 1 and types[0] in ("integer", "number") else ""
        if self.version < NUMBER_FORMATS_KEPT:
            number_type = ""  # kube-openapi's numberValidator got no type before 1.36 (1d94e88): no range checks
        number_format = kept if (number_type, kept) in _NUMBER_FORMATS else ""
        node = _Node(schema, types, kept, number_type, number_format)
        if schema.pattern:
            try:
                node.pattern = compile_go_regex(schema.pattern)
            except GoRegexError as err:
                node.pattern_error = str(err)
        return node


_NUMBER_FORMATS = frozenset((("integer", "int32"), ("integer", "int64"), ("number", "float"), ("number", "double")))


class _Walk:
    """One validation: the recursive walk of kube-openapi's SchemaValidator over a value."""

    def __init__(self, validator: OpenAPIValidator, ratcheting: bool) -> None:
        self.validator = validator
        self.ratcheting = ratcheting

    def value(self, schema: Schema, data: Any, path: str, correlation: CorrelatedObject | None) -> Result:
        """Validate one value; on update, a correlated value equal to its old one reports nothing."""
        result = self._schema(schema, data, path, correlation)
        if correlation is not None and result.errors and correlation.cached_deep_equal():
            return Result(matches=result.matches)  # ratcheted: upstream keeps them only as (unused) warnings
        return result

    def _schema(self, schema: Schema, data: Any, path: str, correlation: CorrelatedObject | None) -> Result:
        node = self.validator.node(schema)
        result = Result()
        if data is None:  # only the type and enum checks see a null
            type_problem = _type_problem(node, None, path)
            if type_problem is None:
                result.matches += 1
            result.add(type_problem)
            result.add(_enum_problem(schema, None, path))
            return result
        checks = 0
        if node.types or node.format:
            type_problem = _type_problem(node, data, path)
            result.merge(_failure(type_problem) if type_problem else Result(matches=1))
            checks += 1
        if schema.any_of or schema.one_of or schema.all_of or schema.not_ is not None:
            result.merge(self._composition(schema, data, path))
        else:
            result.matches += 1  # the (empty) allOf/anyOf/oneOf/not check still counts its match
        checks += 1
        kind = type(data)
        if kind is str:
            result.add(_string_problem(node, data, path))
            checks += 1
            if node.format and check_format(node.format, data) is not None:
                result.add(_format_problem(node.format, data, path))
                checks += 1
        elif kind is int or kind is float:
            result.merge(_number_result(node, data, path))
            checks += 1
        elif kind is list:
            result.merge(self._array(schema, data, path, correlation))
            checks += 1
        result.add(_enum_problem(schema, data, path))
        checks += 1
        if kind is dict:
            result.merge(self._object(schema, data, path, correlation))
            checks += 1
        result.matches += checks + 1
        return result

    # -- allOf, anyOf, oneOf, not (schema_props.go) ----------------------------------------------------

    def _composition(self, schema: Schema, data: Any, path: str) -> Result:
        main = Result()
        if schema.any_of:
            main.merge(self._any_of(schema.any_of, data, path))
        if schema.one_of:
            main.merge(self._one_of(schema.one_of, data, path))
        if schema.all_of:
            results = [self._schema(entry, data, path, None) for entry in schema.all_of]
            for result in results:
                main.merge(result)
            valid = sum(1 for result in results if not result.errors)
            if valid != len(results):
                extra = ". None validated" if valid == 0 else ""
                main.add(Problem(f"{go_quote(path)} must validate all the schemas (allOf){extra}"))
        if schema.not_ is not None and not self._schema(schema.not_, data, path, None).errors:
            main.add(Problem(f"{go_quote(path)} must not validate the schema (not)"))
        main.matches += 1
        return main

    def _any_of(self, entries: Sequence[Schema], data: Any, path: str) -> Result:
        best: Result | None = None
        for entry in entries:
            result = self._schema(entry, data, path, None)
            if not result.errors:
                return result  # the first success is merged and nothing is reported
            if best is None or result.matches > best.matches:
                best = result
        main = _failure(Problem(f"{go_quote(path)} must validate at least one schema (anyOf)"))
        main.merge(best)
        return main

    def _one_of(self, entries: Sequence[Schema], data: Any, path: str) -> Result:
        best: Result | None = None
        first_success: Result | None = None
        valid = 0
        for entry in entries:
            result = self._schema(entry, data, path, None)
            if not result.errors:
                valid += 1
                best = None
                first_success = first_success or result
                continue
            if valid == 0 and (best is None or result.matches > best.matches):
                best = result
        if valid == 1:
            return first_success  # type: ignore[return-value]
        found = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
        main = _failure(Problem(f"{go_quote(path)} must validate one and only one schema (oneOf). {found}"))
        main.merge(best)
        return main

    # -- arrays and objects -----------------------------------------------------------------------------

    def _array(self, schema: Schema, data: list[Any], path: str, correlation: CorrelatedObject | None) -> Result:
        result = Result()
        if schema.items is not None:
            for i, item in enumerate(data):
                child = correlation.index(i) if correlation is not None else None
                result.merge(self.value(schema.items, item, f"{path}[{i}]", child))
        size = len(data)
        if schema.min_items is not None and size < schema.min_items:
            result.add(Problem(f"{path} in {IN} should have at least {schema.min_items} items", Code.MIN_ITEMS, path,
                               size, schema.min_items))  # fmt: skip
        if schema.max_items is not None and size > schema.max_items:
            result.add(Problem(f"{path} in {IN} should have at most {schema.max_items} items", Code.MAX_ITEMS, path,
                               size, schema.max_items))  # fmt: skip
        if schema.unique_items and _has_duplicates(data):
            result.add(Problem(f"{path} in {IN} shouldn't contain duplicates", Code.UNIQUE, path))
        result.matches += 1
        return result

    def _object(self, schema: Schema, data: dict[str, Any], path: str, correlation: CorrelatedObject | None) -> Result:
        result = Result()
        size = len(data)
        if schema.min_properties is not None and size < schema.min_properties:
            result.add(Problem(f"{path} in {IN} should have at least {schema.min_properties} properties",
                               Code.TOO_FEW_PROPERTIES, path, size, schema.min_properties))  # fmt: skip
        if schema.max_properties is not None and size > schema.max_properties:
            result.add(Problem(f"{path} in {IN} should have at most {schema.max_properties} properties",
                               Code.TOO_MANY_PROPERTIES, path, size, schema.max_properties))  # fmt: skip
        properties = schema.properties or {}
        extra = schema.additional_properties
        if extra is False:
            for key in data:
                if key not in properties:
                    result.add(Problem(f"{path}.{key} in {IN} is a forbidden property", Code.UNALLOWED_PROPERTY,
                                       path, key))  # fmt: skip
        elif isinstance(extra, Schema):
            for key, value in data.items():
                if key not in properties:
                    child = self._child(correlation, key, path)
                    result.merge(self.value(extra, value, f"{path}.{key}", child))
        for key, value in data.items():
            prop = properties.get(key)
            if prop is not None:
                child = self._child(correlation, key, path)
                result.merge(self.value(prop, value, f"{path}.{key}" if path else key, child))
        for key in schema.required:
            if key not in data:
                result.add(Problem(f"{path}.{key} in {IN} is required", Code.REQUIRED, f"{path}.{key}"))
        return result

    @staticmethod
    def _child(correlation: CorrelatedObject | None, key: str, path: str) -> CorrelatedObject | None:
        if correlation is None or (not path and key in ("apiVersion", "kind")):
            return None  # apiVersion and kind at the root are never ratcheted: both sides convert to the same
        return correlation.key(key)


# -- leaf checks -------------------------------------------------------------------------------------------


def _json_type(data: Any) -> tuple[str, str]:
    """schemaInfoForType: the JSON type and format kube-openapi infers from a decoded value."""
    kind = type(data)
    if kind is bool:
        return "boolean", ""
    if kind is str:
        return "string", ""
    if kind is int:
        return "integer", "int64"
    if kind is float:
        return "number", "float64"
    if kind is list:
        return "array", ""
    return "object", ""


def _type_problem(node: _Node, data: Any, path: str) -> Problem | None:
    types = node.types
    if data is None:
        if types and "null" not in types and not node.schema.nullable:
            return _invalid_type(path, ",".join(types), "null")
        return None
    json_type, json_format = _json_type(data)
    float_int = json_type == "number" and "integer" in types and is_json_integer(data)
    int_float = json_type == "integer" and "number" in types
    matches = json_type in types or float_int or int_float
    stringish = type(data) is str or type(data) is list
    if not stringish and node.format and not (matches or json_format == node.format):
        return _invalid_type(path, node.format, json_format)
    if stringish and node.format and "number" not in types and "integer" not in types:
        return None
    return None if matches else _invalid_type(path, ",".join(types), json_type)


def _invalid_type(path: str, type_name: str, value: str) -> Problem:
    return Problem(f"{path} in {IN} must be of type {type_name}: {go_quote(value)}", Code.INVALID_TYPE, path, value)


def is_json_integer(value: float) -> bool:
    """swag.IsFloat64AJSONInteger: a float that is an integer within ±(2^53-1), give or take 1e-9 relative."""
    if math.isnan(value) or math.isinf(value) or not -MAX_JSON_FLOAT <= value <= MAX_JSON_FLOAT:
        return False
    rounded = float(round(value))
    if value == rounded:
        return True
    return rounded != 0 and abs(value - rounded) < 1e-9 * abs(rounded)


def _string_problem(node: _Node, data: str, path: str) -> Problem | None:
    """stringValidator: maxLength, then minLength, then pattern; only the first failure counts."""
    schema = node.schema
    if schema.max_length is not None or schema.min_length is not None:
        length = _rune_count(data)
        if schema.max_length is not None and length > schema.max_length:
            return Problem(f"{path} in {IN} should be at most {schema.max_length} chars long", Code.TOO_LONG, path,
                           data, schema.max_length)  # fmt: skip
        if schema.min_length is not None and length < schema.min_length:
            return Problem(f"{path} in {IN} should be at least {schema.min_length} chars long", Code.TOO_SHORT, path,
                           data, schema.min_length)  # fmt: skip
    if schema.pattern:
        if node.pattern_error:
            shown = f"{schema.pattern}, but pattern is invalid: {node.pattern_error}"
            return Problem(f"{path} in {IN} should match '{shown}'", Code.PATTERN, path, data)
        if not search_matches(node.pattern, data):
            return Problem(f"{path} in {IN} should match '{schema.pattern}'", Code.PATTERN, path, data)
    return None


def _rune_count(text: str) -> int:
    """utf8.RuneCount: lone surrogates (invalid UTF-8 kept by surrogateescape) count one per byte, as here."""
    return len(text)


def _format_problem(format_name: str, data: str, path: str) -> Problem | None:
    if check_format(format_name, data):
        return None
    return Problem(f"{path} in {IN} must be of type {format_name}: {go_quote(data)}", Code.INVALID_TYPE, path, data)


def _enum_problem(schema: Schema, data: Any, path: str) -> Problem | None:
    if not schema.enum:
        return None
    if data is not None and any(enum_matches(data, allowed) for allowed in schema.enum):
        return None
    shown = "[" + " ".join(_go_v(v) for v in schema.enum) + "]"
    return Problem(f"{path} in {IN} should be one of {shown}", Code.ENUM, path, data, None, tuple(schema.enum))


def enum_matches(data: Any, allowed: Any) -> bool:
    """basicCommonValidator's test: the value converted to the enum value's Go type, then reflect.DeepEqual."""
    if allowed is None:
        return False
    data_kind, allowed_kind = type(data), type(allowed)
    if data_kind is allowed_kind:
        return deep_equal(data, allowed)
    if data_kind is int and allowed_kind is float:
        return bool(float(data) == allowed)
    if data_kind is float and allowed_kind is int:
        return bool(_go_int64(data) == allowed)
    if data_kind is int and allowed_kind is str:  # Go converts an integer to the string of that code point
        return bool((chr(data) if 0 <= data <= 0x10FFFF and not 0xD800 <= data <= 0xDFFF else "\ufffd") == allowed)
    return False


def _go_int64(value: float) -> int:
    """Go's int64(f) on amd64: truncation, and the minimum int64 for what does not fit."""
    if math.isfinite(value) and -(2.0**63) <= value < 2.0**63:
        return int(value)
    return INT64[0]


def _go_v(value: Any) -> str:
    """fmt's %v of a decoded JSON value (enum lists print with it)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return format_double(value)
    if isinstance(value, list):
        return "[" + " ".join(map(_go_v, value)) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(v)}" for k, v in sorted(value.items())) + "]"
    return str(value)


def _has_duplicates(items: list[Any]) -> bool:
    return any(deep_equal(items[i], items[j]) for i in range(len(items)) for j in range(i))


# -- numbers (numberValidator) ------------------------------------------------------------------------------


def _number_result(node: _Node, value: int | float, path: str) -> Result:
    schema = node.schema
    result = Result()
    result.add(_range_problem(value, node, "Checked", path))
    as_float = float(value)
    if schema.multiple_of is not None:
        result.merge(_bound_result(node, value, as_float, schema.multiple_of, "MultipleOf", path, _multiple_of))
    if schema.minimum is not None:
        result.merge(_bound_result(node, value, as_float, schema.minimum, "Minimum boundary", path, _minimum))
    if schema.maximum is not None:
        result.merge(_bound_result(node, value, as_float, schema.maximum, "Maximum boundary", path, _maximum))
    result.matches += 1
    return result


def _bound_result(node: _Node, value: int | float, as_float: float, bound: float, what: str, path: str,
                  check: Any) -> Result:  # fmt: skip
    """A bound that does not fit the type and format is reported, and then checked on floats (`data`)."""
    result = Result()
    bad_bound = _range_problem(bound, node, what, path)
    result.add(bad_bound)
    result.add(check(node.schema, as_float if bad_bound else value, bound, path))
    return result


def _range_problem(value: int | float, node: _Node, prefix: str, path: str) -> Problem | None:
    """IsValueValidAgainstRange: whether the value fits the node's integer/number type and format."""
    if node.number_type == "integer":
        low, high = INT32 if node.number_format == "int32" else INT64
        whole = value if type(value) is int else _decimal_int(_format_f(value))
        fits = whole is not None and low <= whole <= high
    elif node.number_format == "float":
        fits = _float32_fits(str(value) if type(value) is int else _format_f(value))
    else:
        return None
    if fits:
        return None
    shown = f"with format {node.number_format}" if node.number_format else "(default format)"
    return Problem(f"{prefix} value must be of type {node.number_type} {shown} in {path}")


def _format_f(value: float) -> str:
    """strconv.FormatFloat(v, 'f', -1, 64): the shortest digits, never an exponent."""
    if not math.isfinite(value):
        return format_double(value)
    return format(Decimal(repr(value)).normalize(), "f")


def _decimal_int(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64)'s digits (without the range check)."""
    digits = text[1:] if text[:1] in "+-" else text
    return int(text) if digits.isascii() and digits.isdigit() else None


def _float32_fits(text: str) -> bool:
    try:
        return abs(float(text)) < FLOAT32_MAX
    except ValueError:
        return False


def _multiple_of(schema: Schema, value: int | float, factor: float, path: str) -> Problem | None:
    if type(value) is int:
        whole = _go_int64(factor)
        if whole <= 0:
            return Problem(f"factor MultipleOf declared for {path} must be positive: {whole}",
                           Code.MULTIPLE_OF_MUST_BE_POSITIVE, path, whole)  # fmt: skip
        if _go_div(value, whole) * whole == value:
            return None
        return Problem(f"{path} in {IN} should be a multiple of {whole}", Code.MULTIPLE_OF, path, value)
    if factor <= 0:
        return Problem(f"factor MultipleOf declared for {path} must be positive: {format_double(factor)}",
                       Code.MULTIPLE_OF_MUST_BE_POSITIVE, path, factor)  # fmt: skip
    quotient = (1 / factor * value) if factor < 1 else value / factor
    if is_json_integer(quotient):
        return None
    return Problem(f"{path} in {IN} should be a multiple of {format_double(factor)}", Code.MULTIPLE_OF, path, value)


def _go_div(a: int, b: int) -> int:
    """Go's integer division truncates toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _maximum(schema: Schema, value: int | float, bound: float, path: str) -> Problem | None:
    exclusive = schema.exclusive_maximum
    limit: int | float = _go_int64(bound) if type(value) is int else bound
    if value > limit or (exclusive and value == limit):
        word = "less than" if exclusive else "less than or equal to"
        return Problem(f"{path} in {IN} should be {word} {_number_text(limit)}", Code.MAX, path, value)
    return None


def _minimum(schema: Schema, value: int | float, bound: float, path: str) -> Problem | None:
    exclusive = schema.exclusive_minimum
    limit: int | float = _go_int64(bound) if type(value) is int else bound
    if value < limit or (exclusive and value == limit):
        word = "greater than" if exclusive else "greater than or equal to"
        return Problem(f"{path} in {IN} should be {word} {_number_text(limit)}", Code.MIN, path, value)
    return None


def _number_text(value: int | float) -> str:
    return str(value) if type(value) is int else format_double(value)


# -- field errors (kubeOpenAPIResultToFieldErrors) ------------------------------------------------------------


def to_field_errors(path: fe.Path, result: Result) -> list[fe.FieldError]:
    """The result as the API server reports it; `path` is where the validated value sits (`status`, or root)."""
    return [_field_error(path, problem) for problem in result.errors.values()]


def _field_error(base: fe.Path, problem: Problem) -> fe.FieldError:
    if problem.code is None:
        return fe.invalid(base, "", problem.message)
    path = base.child(problem.name[1:] if problem.name.startswith(".") else problem.name)
    if not problem.name or problem.name == ".":
        path = base
    value = "" if problem.value is _NO_VALUE or problem.value is None else problem.value
    code = problem.code
    if code is Code.REQUIRED:
        return fe.required(path, "")
    if code is Code.ENUM:
        supported = [v if isinstance(v, str) else fe.json_text(v) for v in problem.values]
        return fe.not_supported(path, None if problem.value is _NO_VALUE else problem.value, supported)
    if code is Code.TOO_LONG:
        return fe.too_long_max_length(path, problem.valid if isinstance(problem.valid, int) else -1)
    if code in (Code.MAX_ITEMS, Code.TOO_MANY_PROPERTIES):
        return fe.too_many(path, problem.value, problem.valid)
    if code is Code.INVALID_TYPE:
        return fe.type_invalid(path, value, problem.message)
    return fe.invalid(path, value, problem.message)
