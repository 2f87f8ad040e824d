"""Kubernetes' IP and CIDR libraries (k8s.io/apiserver pkg/cel/library/ip.go, cidr.go).

They are the functions cel-go's network extension later copied, so the implementations are
kcel.libs.network's; Kubernetes adds its runtime costs (cost.go) and words CIDR parse errors
its own way, and it has no compile-time literal validator.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

from kcel.errors import EvalError
from kcel.eval.sizes import actual_size
from kcel.libs import (
    UNIT,
    CallEstimate,
    CallSite,
    CostEstimate,
    Estimate,
    Library,
    Overload,
    RuntimeCost,
    SizeEstimate,
    network,
    size_estimate,
    unit_estimate,
)
from kcel.libs.network import CIDR

_CONVERSION = "parse error during conversion from string: "


def _tenth(n: float) -> int:
    return math.ceil(n * 0.1)


def _of_first(factor: float) -> RuntimeCost:
    return lambda args, result: _tenth(actual_size(args[0]) * factor)


def _contains_ip(args: Sequence[Any], result: Any) -> int:
    """Comparing the CIDR's bytes twice over."""
    return _tenth(2 * actual_size(args[0]))


def _contains_cidr(args: Sequence[Any], result: Any) -> int:
    """As containsIP, plus masking the CIDR and comparing the prefix lengths."""
    c = actual_size(args[0])
    return _tenth(2 * c) + _tenth(c) + 1


def _parsing_too(cost: RuntimeCost) -> RuntimeCost:
    """The `_string` overload ids also parse their argument (Kubernetes checks the id, not the value's type)."""
    return lambda args, result: cost(args, result) + _tenth(actual_size(args[1]))


COSTS: dict[str, RuntimeCost] = {
    "string_to_ip": _of_first(1), "string_to_cidr": _of_first(1), "is_ip": _of_first(1), "is_cidr": _of_first(1),
    "ip_is_canonical": _of_first(2), "cidr_contains_ip_ip": _contains_ip,
    "cidr_contains_ip_string": _parsing_too(_contains_ip), "cidr_contains_cidr": _contains_cidr,
    "cidr_contains_cidr_string": _parsing_too(_contains_cidr),
}  # fmt: skip


_ADDRESS_COMPARE = SizeEstimate(4, 16).add(SizeEstimate(4, 16)).times(0.1)  # two 4- or 16-byte addresses
_CIDR_COMPARE = _ADDRESS_COMPARE.add(SizeEstimate(4, 16).times(0.1)).add(UNIT)  # and the mask


def _containment(base: CostEstimate, parses_string: bool) -> Estimate:
    """containsIP/containsCIDR: comparing addresses, plus parsing the argument when it is a string."""

    def estimate(call: CallSite) -> CallEstimate:
        return CallEstimate(base.add(call.size(1).times(0.1)) if parses_string else base)

    return estimate


ESTIMATES: dict[str, Estimate] = {
    "string_to_ip": size_estimate(0.1), "string_to_cidr": size_estimate(0.1), "is_ip": size_estimate(0.1),
    "is_cidr": size_estimate(0.1), "ip_is_canonical": size_estimate(2 * 0.1), "cidr_ip": unit_estimate,
    "cidr_contains_ip_ip": _containment(_ADDRESS_COMPARE, False),
    "cidr_contains_ip_string": _containment(_ADDRESS_COMPARE, True),
    "cidr_contains_cidr": _containment(_CIDR_COMPARE, False),
    "cidr_contains_cidr_string": _containment(_CIDR_COMPARE, True),
}  # fmt: skip
"""Kubernetes' EstimateCallCost for the functions whose estimate is not cel-go's default of 1."""


def string_to_cidr(text: str) -> CIDR:
    """Kubernetes repeats its own prefix in front of netip's message."""
    try:
        return network.parse_cidr(text)
    except EvalError as err:
        detail = err.message.split(_CONVERSION, 1)[-1]
        prefix = f"network address {_CONVERSION}"
        raise EvalError(prefix + prefix + detail) from None


def contains_cidr_before_1_33(parent: CIDR, child: CIDR) -> bool:
    """containsCIDR before 1.33 (apiserver 64791740a fixed it): true only when the child's address, as written, is
    the parent's network address (`Masked() == PrefixFrom(child.Addr(), parent.Bits())`), so 10.0.0.0/8 did not
    contain 10.1.0.0/16."""
    if parent.ip.bits != child.ip.bits or parent.prefix_length > child.prefix_length:
        return False
    return parent.masked() == CIDR(child.ip, parent.prefix_length)


def contains_ip_string(cidr: CIDR, text: str) -> bool:
    """cidrContainsIPString: the string is converted first, and the error of a bad one is not passed on: the CIDR
    that does not meet an IP is the argument `MaybeNoSuchOverloadErr` is given (apiserver pkg/cel/library/cidr.go)."""
    try:
        ip = network.parse_ip(text)
    except EvalError:
        raise EvalError("no such overload") from None
    return network.cidr_contains_ip(cidr, ip)


def contains_cidr_string(parent: CIDR, text: str) -> bool:
    """cidrContainsCIDRString: the string through `cidr()` first, whose error (its prefix twice) is the answer."""
    return network.cidr_contains_cidr(parent, string_to_cidr(text))


_KUBERNETES: dict[str, Callable[..., Any]] = {
    "string_to_cidr": string_to_cidr,
    "cidr_contains_ip_string": contains_ip_string,
    "cidr_contains_cidr_string": contains_cidr_string,
}
_BEFORE_1_33: dict[str, Callable[..., Any]] = {
    "cidr_contains_cidr": contains_cidr_before_1_33,
    "cidr_contains_cidr_string": lambda parent, text: contains_cidr_before_1_33(parent, string_to_cidr(text)),
}


def _kubernetes(overload: Overload, version: int) -> Overload:
    impl = _KUBERNETES.get(overload.id, overload.impl)
    if version < 1:
        impl = _BEFORE_1_33.get(overload.id, impl)
    cost, estimate = COSTS.get(overload.id, overload.cost), ESTIMATES.get(overload.id, overload.estimate)
    return dataclasses.replace(overload, impl=impl, cost=cost, estimate=estimate)


def library(version: int = 1) -> Library:
    """The library as an API server runs it: version 0 before 1.33 (the old containsCIDR), else 1."""
    overloads = tuple(_kubernetes(o, version) for o in network.LIBRARY.overloads)
    return Library("kubernetes.net", overloads=overloads, types=network.LIBRARY.types)


LIBRARY = library(1)
