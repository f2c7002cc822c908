"""Reading a configuration: from a YAML file, from an already-loaded mapping, or the defaults."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from kubesched.config.decode import decode, show
from kubesched.config.types import (
    API_VERSION,
    DEPRECATED_API_VERSIONS,
    KIND,
    SchedulerConfiguration,
)
from kubesched.config.validate import build_configuration
from kubesched.errors import ConfigError, FieldError
from kubesched.framework.registry import Registry

__all__ = ["default_config", "load_config", "parse_config"]


class _StrictLoader(yaml.SafeLoader):
    """YAML with duplicate keys refused, as kube-scheduler's strict decoder does."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base class reports it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {show(key)}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


#: Called with a configuration that has errors, to add the errors its caller would find next
#: (its plugins' args), so that one run reports every mistake of a file.
ErrorCheck = Callable[[SchedulerConfiguration], list[FieldError]]


def load_config(
    source: str | os.PathLike[str] | None,
    registry: Registry,
    *,
    also_check: ErrorCheck | None = None,
) -> SchedulerConfiguration:
    """The configuration in the YAML file ``source``, or the defaults when ``source`` is ``None``.

    Raises :class:`~kubesched.ConfigError` naming the file for a file that cannot be read, invalid
    YAML (with its line and column), and every problem in the configuration itself (with
    ``also_check``'s errors when there are some).
    """
    if source is None:
        return default_config(registry, also_check=also_check)
    name = os.fspath(source)
    try:
        with open(name, encoding="utf-8") as stream:
            text = stream.read()
    except FileNotFoundError:
        raise ConfigError([FieldError("", "cannot read the file: no such file")], name) from None
    except IsADirectoryError:
        raise ConfigError(
            [FieldError("", "cannot read the file: it is a directory")], name
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            [
                FieldError(
                    "", f"cannot read the file: not UTF-8 text ({exc.reason} at byte {exc.start})"
                )
            ],
            name,
        ) from None
    except OSError as exc:
        raise ConfigError(
            [FieldError("", f"cannot read the file: {exc.strerror or exc}")], name
        ) from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError([FieldError("", f"invalid YAML at {where}{problem}")], name) from None
    except yaml.YAMLError as exc:
        raise ConfigError([FieldError("", f"invalid YAML: {exc}")], name) from None
    if data is None:
        raise ConfigError(
            [FieldError("", f"the file is empty; expected a {KIND} (apiVersion: {API_VERSION})")],
            name,
        )
    return parse_config(data, registry, source=name, also_check=also_check)


def parse_config(
    data: Any, registry: Registry, source: str = "", *, also_check: ErrorCheck | None = None
) -> SchedulerConfiguration:
    """The configuration in an already-loaded mapping (``source`` names it in errors).

    Raises :class:`~kubesched.ConfigError` listing every problem found, each at its field path;
    when there is one, ``also_check``'s errors are listed too.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(
            [FieldError("", f"must be a mapping (a {KIND}), got {show(data)}")], source
        )
    errors: list[FieldError] = []
    warnings: list[str] = []
    api_version = data.get("apiVersion")
    accepted = (API_VERSION, *DEPRECATED_API_VERSIONS)
    if api_version in DEPRECATED_API_VERSIONS:
        warnings.append(f"{api_version} is deprecated; use {API_VERSION}")
    elif api_version is None:
        errors.append(FieldError("apiVersion", f"required: {API_VERSION}"))
    elif api_version not in accepted:
        errors.append(
            FieldError(
                "apiVersion",
                f"unsupported {show(api_version)}; use "
                f"{API_VERSION} (or {', '.join(accepted[1:])})",
            )
        )
    kind = data.get("kind")
    if kind != KIND:
        got = "none" if kind is None else show(kind)
        errors.append(FieldError("kind", f"must be {KIND}, got {got}"))
    version = api_version if api_version in accepted else API_VERSION
    decoded, decode_errors = decode(data, version)
    errors.extend(decode_errors)
    config = build_configuration(decoded, registry, errors, warnings)
    if errors:
        if also_check is not None:
            errors.extend(also_check(config))
        raise ConfigError(errors, source, warnings=warnings)
    return config


def default_config(
    registry: Registry, *, also_check: ErrorCheck | None = None
) -> SchedulerConfiguration:
    """The configuration when there is no file: one profile named ``DEFAULT_SCHEDULER_NAME`` with
    kube-scheduler's default plugins that are installed.

    Raises :class:`~kubesched.ConfigError` when an installed default plugin cannot be loaded, or
    the installed ones leave the profile without a queueSort or bind plugin.
    """
    return parse_config(
        {"apiVersion": API_VERSION, "kind": KIND},
        registry,
        source="built-in defaults",
        also_check=also_check,
    )
