"""Which CEL package evaluates DRA device selectors: kube's selector cases through each candidate.

Not part of CI. ``python bench/dra_cel_candidates.py`` in a virtualenv holding the candidates
(``cel-python``, ``common-expression-language``, ``cel-expr-python``) and the DynamicResources
plugin. For each: how many of kube's cases (plugins/dynamic_resources/tests/cel_cases.py) come
out right, then the time of one evaluation of a typical selector on one device. cel-python
carries Quantity and Semver as Python objects; the two native packages only take plain values,
so for them quantities and versions travel as tagged maps with canonical contents (equality
still by value) and the Kubernetes functions dispatch on the tag.
"""

from __future__ import annotations

import sys
import timeit
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins" / "dynamic_resources" / "tests"))

from cel_cases import CASES  # noqa: E402

from kubesched import parse_quantity  # noqa: E402

TYPICAL = (
    'device.driver == "gpu.example.com" && '
    'device.attributes["gpu.example.com"].model == "a100" && '
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0'
)
TYPICAL_DEVICE = (
    "gpu.example.com",
    {"model": {"string": "a100"}, "index": {"int": 3}, "driverVersion": {"version": "1.2.3"}},
    {"memory": {"value": "80Gi"}},
)


# -- the tagged-map encoding for the native packages ---------------------------------------
def _q(text: str) -> dict[str, Any]:
    return {"__quantity__": str(parse_quantity(text).normalize())}


def _v(text: str, normalize: bool = False) -> dict[str, Any]:
    import semver

    if normalize:
        text = text.removeprefix("v")
        parts = text.split(".")
        while len(parts) < 3:
            parts.append("0")
        text = ".".join(parts)
    semver.Version.parse(text)
    return {"__semver__": text}


def _cmp(a: Any, b: Any) -> int:
    import semver

    if "__quantity__" in a and "__quantity__" in b:
        x, y = Decimal(a["__quantity__"]), Decimal(b["__quantity__"])
        return (x > y) - (x < y)
    if "__semver__" in a and "__semver__" in b:
        return semver.Version.parse(a["__semver__"]).compare(b["__semver__"])
    raise TypeError("no such overload")


def _major(v: Any) -> int:
    import semver

    return semver.Version.parse(v["__semver__"]).major


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _v(text, normalize)
    except ValueError:
        return False
    return True


def _encoded_device(driver: str, attributes: dict, capacity: dict, domains: set[str]) -> dict:
    attrs: dict[str, dict] = {d: {} for d in domains}
    caps: dict[str, dict] = {d: {} for d in domains}
    for name, value in attributes.items():
        domain, _, ident = name.rpartition("/")
        ((kind, raw),) = value.items()
        attrs.setdefault(domain or driver, {})[ident] = _v(raw) if kind == "version" else raw
    for name, value in capacity.items():
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, {})[ident] = _q(value["value"])
    return {
        "driver": driver,
        "allowMultipleAllocations": False,
        "attributes": attrs,
        "capacity": caps,
    }


def _domains(expression: str) -> set[str]:
    """Domains an expression indexes with literals: the natives have no map with a default."""
    import re

    return set(re.findall(r'(?:attributes|capacity)\["([^"]+)"\]', expression))


# -- candidates ----------------------------------------------------------------------------
def celpy_candidate():
    """cel-python with Quantity and Semver as Python objects (its functions take any value)."""
    import celpy
    from celpy import celtypes

    class Q:
        def __init__(self, value):
            self.value = value

        def __eq__(self, other):
            return isinstance(other, Q) and self.value == other.value

    def cmp(a, b):
        if isinstance(a, Q) and isinstance(b, Q):
            return (a.value > b.value) - (a.value < b.value)
        import semver

        return semver.Version.parse(a["__semver__"]).compare(b["__semver__"])

    functions = {
        "quantity": lambda s: Q(parse_quantity(str(s))),
        "semver": lambda s, n=False: _v(str(s), bool(n)),
        "isSemver": lambda s, n=False: celtypes.BoolType(_is_semver(str(s), bool(n))),
        "compareTo": lambda a, b: celtypes.IntType(cmp(a, b)),
        "isGreaterThan": lambda a, b: celtypes.BoolType(cmp(a, b) > 0),
        "isLessThan": lambda a, b: celtypes.BoolType(cmp(a, b) < 0),
        "major": lambda v: celtypes.IntType(_major(v)),
    }
    env = celpy.Environment()

    def compile_(expression):
        try:
            return env.program(env.compile(expression), functions=functions)
        except Exception as exc:
            return f"error: {exc}"

    def run(program, device):
        if isinstance(program, str):
            return program
        try:
            result = program.evaluate({"device": device})
        except Exception as exc:
            return f"error: {exc}"
        if isinstance(result, celtypes.BoolType):
            return bool(result)
        return f"error: {result!r}"

    def prepare(device, expression):
        data = _encoded_device(*device, _domains(expression))
        for domain in data["capacity"].values():
            for name, value in domain.items():
                domain[name] = Q(Decimal(value["__quantity__"]))
        return celpy.json_to_cel(data) if False else _to_cel(data)

    def _to_cel(value):
        if isinstance(value, dict) and "__semver__" not in value:
            return celtypes.MapType({celtypes.StringType(k): _to_cel(v) for k, v in value.items()})
        if isinstance(value, bool):
            return celtypes.BoolType(value)
        if isinstance(value, int):
            return celtypes.IntType(value)
        if isinstance(value, str):
            return celtypes.StringType(value)
        return value

    return compile_, run, prepare


def plugin_candidate():
    """cel-expr-python as the DynamicResources plugin wraps it (kubesched_dynamic_resources.cel)."""
    from kubesched_dynamic_resources.cel import CELError, Selector, device_input

    def compile_(expression):
        return Selector(expression)

    def run(program, device):
        try:
            return program.matches(device)
        except CELError as exc:
            return f"error: {exc}"

    def prepare(device, expression):
        return device_input(*device)

    return compile_, run, prepare


def rust_candidate():
    import cel

    functions = {
        "quantity": _q,
        "semver": _v,
        "isSemver": _is_semver,
        "compareTo": _cmp,
        "isGreaterThan": lambda a, b: _cmp(a, b) > 0,
        "isLessThan": lambda a, b: _cmp(a, b) < 0,
        "major": _major,
    }

    def compile_(expression):
        try:
            return cel.compile(expression)
        except Exception as exc:
            return f"error: {exc}"

    def run(program, device):
        if isinstance(program, str):
            return program
        try:
            result = program.execute(cel.Context(variables={"device": device}, functions=functions))
        except Exception as exc:
            return f"error: {exc}"
        return result if isinstance(result, bool) else f"error: result {result!r} is no bool"

    def prepare(device, expression):
        return _encoded_device(*device, _domains(expression))

    return compile_, run, prepare


def cpp_candidate():
    from cel_expr_python import cel as c
    from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

    m = c.Type.Map(c.Type.STRING, c.Type.DYN)
    s = c.Type.STRING

    def member(name, ret, impl, arity=2):
        return c.FunctionDecl(
            name, [c.Overload(f"{name}_map", ret, [m] * arity, is_member=True, impl=impl)]
        )

    functions = [
        c.FunctionDecl("quantity", [c.Overload("quantity_string", m, [s], impl=_q)]),
        c.FunctionDecl(
            "semver",
            [
                c.Overload("semver_string", m, [s], impl=_v),
                c.Overload("semver_string_bool", m, [s, c.Type.BOOL], impl=_v),
            ],
        ),
        c.FunctionDecl(
            "isSemver",
            [
                c.Overload("is_semver_string", c.Type.BOOL, [s], impl=_is_semver),
                c.Overload("is_semver_string_bool", c.Type.BOOL, [s, c.Type.BOOL], impl=_is_semver),
            ],
        ),
        member("compareTo", c.Type.INT, _cmp),
        member("isGreaterThan", c.Type.BOOL, lambda a, b: _cmp(a, b) > 0),
        member("isLessThan", c.Type.BOOL, lambda a, b: _cmp(a, b) < 0),
        member("major", c.Type.INT, _major, arity=1),
    ]
    env = c.NewEnv(
        variables={"device": m},
        functions=functions,
        extensions=[
            ext_bindings.ExtBindings(),
            ext_strings.ExtStrings(),
            ext_optional.ExtOptional(),
        ],
    )

    def compile_(expression):
        try:
            program = env.compile(expression)
        except Exception as exc:
            return f"error: {exc}"
        return program

    def run(program, device):
        if isinstance(program, str):
            return program
        try:
            value = program.eval(data={"device": device})
        except Exception as exc:
            return f"error: {exc}"
        if value.type() == c.Type.ERROR:
            return f"error: {value.value()}"
        result = value.value()
        return result if isinstance(result, bool) else f"error: result {result!r} is no bool"

    def prepare(device, expression):
        return _encoded_device(*device, _domains(expression))

    return compile_, run, prepare


def measure(name, candidate):
    compile_, run, prepare = candidate()
    right, wrong = 0, []
    for case, expression, driver, attributes, capacity, want in CASES:
        got = run(compile_(expression), prepare((driver, attributes, capacity), expression))
        ok = (
            (isinstance(got, str) and got.startswith(want))
            if isinstance(want, str)
            else got is want
        )
        right += ok
        if not ok:
            wrong.append(f"{case} ({str(got)[:60]})")
    program = compile_(TYPICAL)
    device = prepare(TYPICAL_DEVICE, TYPICAL)
    assert run(program, device) is True, run(program, device)
    n = 2000
    per_eval = min(timeit.repeat(lambda: run(program, device), number=n, repeat=3)) / n
    per_compile = min(timeit.repeat(lambda: compile_(TYPICAL), number=20, repeat=3)) / 20
    print(
        f"{name}: {right}/{len(CASES)} right; eval {per_eval * 1e6:.1f} us; "
        f"compile {per_compile * 1e3:.2f} ms"
    )
    for line in wrong:
        print(f"    wrong: {line}")


if __name__ == "__main__":
    for name, candidate in [
        ("cel-python (celpy)", celpy_candidate),
        ("common-expression-language", rust_candidate),
        ("cel-expr-python", cpp_candidate),
        ("cel-expr-python in kubesched_dynamic_resources.cel", plugin_candidate),
    ]:
        try:
            measure(name, candidate)
        except ImportError as exc:
            print(f"{name}: not installed ({exc})")
