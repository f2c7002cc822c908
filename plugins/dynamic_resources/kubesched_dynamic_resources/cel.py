"""Device selectors: CEL expressions over one device, as ``k8s.io/dynamic-resource-allocation/cel``.

An expression sees ``device`` with ``driver``, ``allowMultipleAllocations``, ``attributes`` and
``capacity``; attributes and capacities are grouped by domain (a name without a domain belongs to
the driver's), and looking up an unknown domain gives an empty map, so
``"x" in device.attributes["other.example.com"]`` is false rather than an error. Beside the
standard library and the bindings, strings and optional extensions, an expression may use
Kubernetes' ``quantity`` and ``semver`` functions (``quantity("1Gi")``, ``semver("1.2.3")``,
their comparisons and accessors).

Evaluation is cel-expr-python's (the CEL project's Python runtime over cel-cpp), chosen over the
other CEL packages on the index by running kube's own selector cases through each
(docs/design.md, "CEL for device selectors"). It takes plain values only, so a quantity or a
version travels as a one-entry map holding its canonical text (``{"__quantity__": "1.024E+3"}``):
equality stays equality of value, and the Kubernetes functions read the tag. Compiled programs
are cached per expression. Every failure is a :class:`CELError` whose message is what the claim's
scheduling message shows; nothing here raises anything else for a user's expression.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import semver
from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from kubesched import InvalidQuantity, parse_quantity

__all__ = ["CELError", "DeviceInput", "Selector", "compile_selector", "device_input"]

_QUANTITY = "__quantity__"
_SEMVER = "__semver__"


class CELError(Exception):
    """A selector that does not compile or fails on a device; ``str()`` is the message."""


# -- quantities and versions as tagged maps -------------------------------------------------------
def _quantity_value(text: str) -> dict[str, str]:
    return {_QUANTITY: str(parse_quantity(text).normalize())}


def quantity(text: str) -> dict[str, str]:
    try:
        return _quantity_value(text)
    except InvalidQuantity as exc:
        raise ValueError(str(exc)) from None


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except InvalidQuantity:
        return False
    return True


_LOOSE = re.compile(r"v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)")


def _parse_semver(text: str, normalize: bool = False) -> semver.Version:
    if normalize:
        # Kubernetes' normalisation: an optional "v", missing minor/patch as 0, leading zeros off.
        match = _LOOSE.fullmatch(text)
        if match:
            major, minor, patch, rest = match.groups()
            text = f"{int(major)}.{int(minor or 0)}.{int(patch or 0)}{rest}"
    return semver.Version.parse(text)


def _semver(text: str, normalize: bool = False) -> dict[str, str]:
    try:
        return {_SEMVER: str(_parse_semver(text, normalize))}
    except ValueError:
        raise ValueError(f"could not parse {text!r} as semver") from None


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _parse_semver(text, normalize)
    except ValueError:
        return False
    return True


def _kind(value: Any) -> str:
    if isinstance(value, Mapping) and len(value) == 1:
        if _QUANTITY in value:
            return "Quantity"
        if _SEMVER in value:
            return "Semver"
    return "map"


def _compare(a: Mapping[str, str], b: Mapping[str, str]) -> int:
    kind_a, kind_b = _kind(a), _kind(b)
    if kind_a == kind_b == "Quantity":
        x, y = Decimal(a[_QUANTITY]), Decimal(b[_QUANTITY])
        return (x > y) - (x < y)
    if kind_a == kind_b == "Semver":
        return semver.Version.parse(a[_SEMVER]).compare(b[_SEMVER])
    raise ValueError(f"no such overload: {kind_a}.compareTo({kind_b})")


def _quantity_of(value: Mapping[str, str], method: str) -> Decimal:
    if _kind(value) != "Quantity":
        raise ValueError(f"no such overload: {_kind(value)}.{method}()")
    return Decimal(value[_QUANTITY])


def _version_of(value: Mapping[str, str], method: str) -> semver.Version:
    if _kind(value) != "Semver":
        raise ValueError(f"no such overload: {_kind(value)}.{method}()")
    return semver.Version.parse(value[_SEMVER])


def _tagged(value: Decimal) -> dict[str, str]:
    return {_QUANTITY: str(value.normalize())}


_MAP = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)
_S, _B, _I = cel.Type.STRING, cel.Type.BOOL, cel.Type.INT


def _member(name: str, result: cel.Type, impl: Any, *params: cel.Type) -> cel.FunctionDecl:
    overload = cel.Overload(f"{name}_map", result, [_MAP, *params], is_member=True, impl=impl)
    return cel.FunctionDecl(name, [overload])


def _global(name: str, result: cel.Type, impl: Any) -> cel.FunctionDecl:
    return cel.FunctionDecl(
        name,
        [
            cel.Overload(f"{name}_string", result, [_S], impl=impl),
            cel.Overload(f"{name}_string_bool", result, [_S, _B], impl=impl),
        ],
    )


_FUNCTIONS = [
    cel.FunctionDecl("quantity", [cel.Overload("quantity_string", _MAP, [_S], impl=quantity)]),
    cel.FunctionDecl(
        "isQuantity", [cel.Overload("isQuantity_string", _B, [_S], impl=_is_quantity)]
    ),
    _global("semver", _MAP, _semver),
    _global("isSemver", _B, _is_semver),
    _member("compareTo", _I, _compare, _MAP),
    _member("isGreaterThan", _B, lambda a, b: _compare(a, b) > 0, _MAP),
    _member("isLessThan", _B, lambda a, b: _compare(a, b) < 0, _MAP),
    _member("major", _I, lambda v: _version_of(v, "major").major),
    _member("minor", _I, lambda v: _version_of(v, "minor").minor),
    _member("patch", _I, lambda v: _version_of(v, "patch").patch),
    _member("sign", _I, lambda q: (lambda x: (x > 0) - (x < 0))(_quantity_of(q, "sign"))),
    _member(
        "isInteger",
        _B,
        lambda q: (lambda x: x == x.to_integral_value())(_quantity_of(q, "isInteger")),
    ),
    _member("asInteger", _I, lambda q: int(_quantity_of(q, "asInteger"))),
    _member(
        "asApproximateFloat",
        cel.Type.DOUBLE,
        lambda q: float(_quantity_of(q, "asApproximateFloat")),
    ),
    _member(
        "add", _MAP, lambda q, o: _tagged(_quantity_of(q, "add") + _quantity_of(o, "add")), _MAP
    ),
    _member(
        "sub", _MAP, lambda q, o: _tagged(_quantity_of(q, "sub") - _quantity_of(o, "sub")), _MAP
    ),
]

_ENV = cel.NewEnv(
    variables={"device": _MAP},
    functions=_FUNCTIONS,
    extensions=[
        ext_bindings.ExtBindings(),
        ext_strings.ExtStrings(),
        ext_optional.ExtOptional(),
    ],
)


# -- the device ---------------------------------------------------------------------------------
def _attribute_value(name: str, attribute: Mapping[str, Any]) -> Any:
    if not isinstance(attribute, Mapping):
        raise CELError(f"attribute {name}: unsupported attribute value")
    for kind in ("int", "bool", "string"):
        if kind in attribute:
            return attribute[kind]
    if "version" in attribute:
        try:
            return {_SEMVER: str(semver.Version.parse(str(attribute["version"])))}
        except ValueError as exc:
            raise CELError(f"attribute {name}: parse semantic version: {exc}") from None
    raise CELError(f"attribute {name}: unsupported attribute value")


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


class DeviceInput:
    """The ``device`` variable for one device, built once and shared by every selector."""

    __slots__ = ("_activation", "data", "domains")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.domains = set(data["attributes"]) | set(data["capacity"])
        self._activation: Any = None

    def activation(self, domains: frozenset[str]) -> Any:
        """An activation in which ``domains`` exist (empty when the device has none of them)."""
        missing = domains - self.domains
        if missing:
            data = dict(self.data)
            data["attributes"] = {**{d: {} for d in missing}, **data["attributes"]}
            data["capacity"] = {**{d: {} for d in missing}, **data["capacity"]}
            return _ENV.Activation({"device": data})
        if self._activation is None:
            self._activation = _ENV.Activation({"device": self.data})
        return self._activation


def device_input(
    driver: str,
    attributes: Mapping[str, Any] | None,
    capacity: Mapping[str, Any] | None,
    allow_multiple_allocations: bool = False,
) -> DeviceInput:
    """The ``device`` variable for a slice's device (attributes and capacity as in the API)."""
    attrs: dict[str, dict[str, Any]] = {}
    for name, attribute in (attributes or {}).items():
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[ident] = _attribute_value(name, attribute)
    caps: dict[str, dict[str, Any]] = {}
    for name, cap in (capacity or {}).items():
        domain, ident = _split(name, driver)
        raw = cap.get("value", "0") if isinstance(cap, Mapping) else cap
        try:
            caps.setdefault(domain, {})[ident] = _quantity_value(str(raw))
        except InvalidQuantity as exc:
            raise CELError(f"capacity {name}: {exc}") from None
    return DeviceInput(
        {
            "driver": driver,
            "allowMultipleAllocations": bool(allow_multiple_allocations),
            "attributes": attrs,
            "capacity": caps,
        }
    )


# -- compiling and evaluating -------------------------------------------------------------------
#: The domains an expression names literally (``device.attributes["gpu.example.com"]``): they
#: must exist, empty if need be, since a plain map has no default for an unknown key.
_DOMAIN_LITERAL = re.compile(r"""(?:attributes|capacity)\s*\[\s*(?:"([^"]*)"|'([^']*)')\s*\]""")
_NOT_FOUND = re.compile(r'Key not found in map : "?([^"]*)"?')


def _message(text: str) -> str:
    text = text.removeprefix("INVALID_ARGUMENT: ")
    match = _NOT_FOUND.search(text)
    if match:
        return f"no such key: {match.group(1)}"
    return text.split(" [")[0] if text.endswith("]") else text


class Selector:
    """One compiled expression; ``error`` is set when it did not compile."""

    __slots__ = ("_domains", "_program", "error", "expression")

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.error: str | None = None
        self._program: Any = None
        self._domains = frozenset(a or b for a, b in _DOMAIN_LITERAL.findall(expression))
        try:
            program = _ENV.compile(expression)
        except Exception as exc:  # cel-cpp reports every compile problem as one exception
            self.error = f"compilation failed: {_message(str(exc))}"
            return
        output = program.return_type()
        if output != cel.Type.BOOL and output != cel.Type.DYN:
            self.error = f"must evaluate to bool or the unknown type, not {output.name().lower()}"
            return
        self._program = program

    def matches(self, device: DeviceInput) -> bool:
        """Whether ``device`` matches; :class:`CELError` when the expression fails on it."""
        if self._program is None:
            raise CELError(self.error or "no program")
        try:
            result = self._program.eval(device.activation(self._domains))
        except Exception as exc:  # a Kubernetes function that failed (a bad quantity, ...)
            raise CELError(_message(str(exc))) from None
        value = result.value()
        if result.type() == cel.Type.ERROR:
            raise CELError(_message(str(value)))
        if not isinstance(value, bool):
            raise CELError(
                f"CEL result of type {result.type().name().lower()} could not be converted to bool"
            )
        return value


@functools.lru_cache(maxsize=1024)
def compile_selector(expression: str) -> Selector:
    """The compiled selector for ``expression``, compiled once (kube's ``cel.Cache``)."""
    return Selector(expression)
