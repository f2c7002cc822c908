"""Field errors worded as ``k8s.io/apimachinery/pkg/util/validation/field`` words them."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from kubesched.api.selectors import label_key_errors


def go_value(value: Any) -> str:
    """A bad value as ``field.Error.ErrorBody`` prints it: strings quoted, numbers bare."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, default=str, ensure_ascii=False)


def invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {go_value(value)}: {detail}"


def required_value(path: str, detail: str = "") -> str:
    return f"{path}: Required value: {detail}" if detail else f"{path}: Required value"


def forbidden(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"


def not_supported(path: str, value: Any, supported: tuple[str, ...]) -> str:
    quoted = ", ".join(json.dumps(v) for v in supported)
    return f"{path}: Unsupported value: {go_value(value)}: supported values: {quoted}"


def duplicate_value(path: str, shown: str, detail: str = "") -> str:
    return f"{path}: Duplicate value: {shown}" + (f": {detail}" if detail else "")


def label_name_errors(key: Any, path: str) -> Iterator[str]:
    """``ValidateLabelName``: one error per way ``key`` is not a qualified name."""
    if isinstance(key, str):
        for message in label_key_errors(key):
            yield invalid(path, key, message)


def each_mapping(value: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, Mapping):
                yield index, item


def as_mapping(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def each_value_errors(values: list[Any], path: str, check: Callable[[str], list[str]]) -> list[str]:
    """One Invalid error per problem ``check`` finds in each string of ``values``."""
    return [
        invalid(f"{path}[{index}]", value, message)
        for index, value in enumerate(values)
        if isinstance(value, str)
        for message in check(value)
    ]
