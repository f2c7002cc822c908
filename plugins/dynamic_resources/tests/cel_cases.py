"""kube's DRA selector cases (k8s.io/dynamic-resource-allocation/cel compile_test.go, v1.37), as
data: ``(name, expression, driver, attributes, capacity, want)`` where ``want`` is the match, or
``"error: <part of the message>"``. List-valued attributes are left out: DRAListTypeAttributes is
alpha (off) in v1.37. Shared by the plugin's tests and ``bench/dra_cel_candidates.py``."""

from __future__ import annotations

from typing import Any

D = "dra.example.com"

Case = tuple[str, str, str, dict[str, Any], dict[str, Any], Any]

CASES: list[Case] = [
    ("true", "true", "", {}, {}, True),
    ("false", "false", "", {}, {}, False),
    ("syntax error", "?!", "", {}, {}, "error: "),
    ("wrong output type", "1", "", {}, {}, "error: "),
    (
        "missing attribute",
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
        "",
        {},
        {},
        "error: no such key: noSuchAttr",
    ),
    (
        "missing attribute index",
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
        "",
        {},
        {},
        "error: no such key: noSuchAttr",
    ),
    ("empty attribute", '"no-such-domain" in device.attributes', "", {}, {}, False),
    (
        "domain present",
        '"dra.example.com" in device.attributes',
        "",
        {"dra.example.com/something": {"bool": True}},
        {},
        True,
    ),
    ("driver empty", 'device.driver == ""', "", {}, {}, True),
    ("driver", 'device.driver == "dra.example.com"', D, {}, {}, True),
    ("attribute dot", f'device.attributes["{D}"].name', D, {"name": {"bool": True}}, {}, True),
    ("attribute index", f'device.attributes["{D}"]["name"]', D, {"name": {"bool": True}}, {}, True),
    (
        "bind",
        f'cel.bind(dra, device.attributes["{D}"], dra.name)',
        D,
        {"name": {"bool": True}},
        {},
        True,
    ),
    (
        "qualified attribute",
        'device.attributes["other.example.com"].name',
        D,
        {"other.example.com/name": {"bool": True}},
        {},
        True,
    ),
    ("bool", f'device.attributes["{D}"].name', D, {"name": {"bool": True}}, {}, True),
    ("int", f'device.attributes["{D}"].name > 0', D, {"name": {"int": 1}}, {}, True),
    ("string", f'device.attributes["{D}"].name == "fish"', D, {"name": {"string": "fish"}}, {}, True),
    (
        "version",
        f'device.attributes["{D}"].name.isGreaterThan(semver("0.0.1"))',
        D,
        {"name": {"version": "1.0.0"}},
        {},
        True,
    ),
    (
        "semver normalize",
        f'device.attributes["{D}"].name.isGreaterThan(semver("v0.0.1", true))'
        ' && isSemver("v1.0.0", true)',
        D,
        {"name": {"version": "1.0.0"}},
        {},
        True,
    ),
    (
        "quantity",
        f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
        D,
        {},
        {"name": {"value": "1Mi"}},
        True,
    ),
    (
        "check positive",
        f'"name" in device.capacity["{D}"] && '
        f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
        D,
        {},
        {"name": {"value": "1Mi"}},
        True,
    ),
    (
        "check negative",
        f'!("name" in device.capacity["{D}"]) || '
        f'device.capacity["{D}"].name.isGreaterThan(quantity("1Ki"))',
        "",
        {},
        {},
        True,
    ),
    (
        "all",
        " && ".join(
            [
                f'device.capacity["{D}"].quantity.isGreaterThan(quantity("1Ki"))',
                f'device.attributes["{D}"].bool',
                f'device.attributes["{D}"].int > 0',
                f'device.attributes["{D}"].string == "fish"',
                f'device.attributes["{D}"].version.isGreaterThan(semver("0.0.1"))',
                f'device.capacity["{D}"]["quantity"].isGreaterThan(quantity("1Ki"))',
                f'device.attributes["{D}"]["bool"]',
                f'device.attributes["{D}"]["int"] > 0',
                f'device.attributes["{D}"]["string"] == "fish"',
                f'device.attributes["{D}"]["version"].isGreaterThan(semver("0.0.1"))',
            ]
        ),
        D,
        {
            "bool": {"bool": True},
            "int": {"int": 1},
            "string": {"string": "fish"},
            "version": {"version": "1.0.0"},
        },
        {"quantity": {"value": "1Mi"}},
        True,
    ),
    (
        "many",
        f'device.attributes["{D}"].a && device.attributes["{D}"].b && device.attributes["{D}"].c',
        D,
        {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}},
        {},
        True,
    ),
    (
        "exists_one over domains",
        'device.attributes.exists_one(x, x == "dra.example.com")',
        D,
        {"services": {"string": "some_example_value"}},
        {},
        True,
    ),
    (
        "exists_one over names",
        f'device.attributes["{D}"].exists_one(x, x == "services")',
        D,
        {"services": {"string": "some_example_value"}},
        {},
        True,
    ),
    (
        "split",
        f'device.attributes["{D}"].services.split("example").size() >= 2',
        D,
        {"services": {"string": "some_example_value"}},
        {},
        True,
    ),
    (
        "regex",
        f'device.attributes["{D}"].services.matches("[^a]?sym")',
        D,
        {"services": {"string": "asymetric"}},
        {},
        True,
    ),
    (
        "capacity exists_one over domains",
        'device.capacity.exists_one(x, x == "dra.example.com")',
        D,
        {},
        {"memory": {"value": "1Mi"}},
        True,
    ),
    (
        "capacity exists_one over names",
        f'device.capacity["{D}"].exists_one(x, x == "memory")',
        D,
        {},
        {"memory": {"value": "1Mi"}},
        True,
    ),
    ("allow multiple allocations default", "device.allowMultipleAllocations == false", D, {}, {}, True),
    (
        "scalar is not iterable",
        f'device.attributes["{D}"].name.exists(x, x > 0)',
        D,
        {"name": {"int": 1}},
        {},
        "error: ",
    ),
    # Beyond compile_test.go: what DRA examples and drivers write.
    (
        "quantity compareTo",
        f'device.capacity["{D}"].memory.compareTo(quantity("16Gi")) >= 0',
        D,
        {},
        {"memory": {"value": "40Gi"}},
        True,
    ),
    ("quantity equality by value", 'quantity("1Gi") == quantity("1024Mi")', D, {}, {}, True),
    (
        "semver major",
        f'device.attributes["{D}"].driverVersion.major() == 1',
        D,
        {"driverVersion": {"version": "1.2.3"}},
        {},
        True,
    ),
    (
        "optional-free default",
        f'"model" in device.attributes["{D}"] && device.attributes["{D}"].model == "a100"',
        D,
        {"model": {"string": "a100"}},
        {},
        True,
    ),
    ("string ext lowerAscii", '"GPU".lowerAscii() == "gpu"', D, {}, {}, True),
]
