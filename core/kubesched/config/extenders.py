"""``extenders[]`` of a KubeSchedulerConfiguration, typed (kube's ``config.Extender``).

The decoder has already checked every field's type and refused unknown fields; this module turns
the checked mappings into :class:`Extender` values with kube-scheduler's defaults (``httpTimeout``
5s), reports what kube's ``validateExtenders`` reports that the decoder cannot (duplicate managed
resources, a resource name that is not an extended resource), and applies the one effect an
extender has on the profiles: resources an extender manages with ``ignoredByScheduler`` are added
to NodeResourcesFit's ``ignoredResources`` in every profile (kube's ``buildExtenders``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.config.durations import parse_duration
from kubesched.errors import FieldError

if TYPE_CHECKING:
    from kubesched.config.types import Profile

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "Extender",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "apply_ignored_resources",
    "decode_extenders",
]

#: kube-scheduler's ``DefaultExtenderTimeout``: an ``httpTimeout`` of 0 (or none) means this.
DEFAULT_EXTENDER_TIMEOUT = 5.0
_NODE_RESOURCES_FIT = "NodeResourcesFit"
_NATIVE_PREFIX = "kubernetes.io/"


@dataclass(frozen=True)
class ExtenderTLSConfig:
    """``tlsConfig``: kube's ``ExtenderTLSConfig`` (files or inline PEM data)."""

    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = ""


@dataclass(frozen=True)
class ExtenderManagedResource:
    """``managedResources[]``: an extended resource the extender manages."""

    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True)
class Extender:
    """One HTTP extender, called at kube-scheduler's points (see
    :mod:`kubesched.engine.extender`)."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    bind_verb: str = ""
    weight: int = 0
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    #: Seconds.
    http_timeout: float = DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ExtenderManagedResource, ...] = field(default_factory=tuple)
    ignorable: bool = False
    #: Position in ``extenders[]``, for messages.
    index: int = 0


def _duration(value: Any) -> float:

    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) / 1e9  # a bare number is Go's nanoseconds
    seconds = parse_duration(value) if isinstance(value, str) else None
    return seconds or DEFAULT_EXTENDER_TIMEOUT


def _is_extended_resource(name: str) -> bool:
    """kube's ``IsExtendedResourceName``: qualified, outside ``kubernetes.io/``, no
    ``requests.`` prefix."""
    if "/" not in name or name.startswith(_NATIVE_PREFIX) or "kubernetes.io/" in name:
        return False
    return not name.startswith("requests.")


def decode_extenders(raw: Sequence[Any] | None, errors: list[FieldError]) -> list[Extender]:
    """Typed extenders from ``extenders[]`` as the decoder kept them; problems are appended to
    ``errors``. kube-scheduler keeps them in file order, except that ignorable extenders move
    to the end (``buildExtenders``): that order is kept here."""
    out: list[Extender] = []
    seen: set[str] = set()
    for i, item in enumerate(raw or []):
        if not isinstance(item, Mapping):
            continue  # the decoder reported it
        path = f"extenders[{i}]"
        resources = []
        for j, resource in enumerate(item.get("managedResources") or []):
            if not isinstance(resource, Mapping):
                continue
            name = str(resource.get("name") or "")
            rpath = f"{path}.managedResources[{j}].name"
            if not _is_extended_resource(name):
                errors.append(
                    FieldError(
                        rpath,
                        f"Invalid value: {name!r}: must be an extended resource name "
                        "(a qualified name outside the kubernetes.io/ domain)",
                    )
                )
            if name in seen:
                errors.append(
                    FieldError(
                        rpath, f"Invalid value: {name!r}: duplicate extender managed resource name"
                    )
                )
            seen.add(name)
            resources.append(
                ExtenderManagedResource(name, bool(resource.get("ignoredByScheduler")))
            )
        tls = item.get("tlsConfig")
        tls_config = (
            ExtenderTLSConfig(
                insecure=bool(tls.get("insecure")),
                server_name=tls.get("serverName") or "",
                cert_file=tls.get("certFile") or "",
                key_file=tls.get("keyFile") or "",
                ca_file=tls.get("caFile") or "",
                cert_data=tls.get("certData") or "",
                key_data=tls.get("keyData") or "",
                ca_data=tls.get("caData") or "",
            )
            if isinstance(tls, Mapping)
            else None
        )
        url = item.get("urlPrefix") or ""
        if not url:
            errors.append(FieldError(f"{path}.urlPrefix", "Required value"))
        out.append(
            Extender(
                url_prefix=url,
                filter_verb=item.get("filterVerb") or "",
                preempt_verb=item.get("preemptVerb") or "",
                prioritize_verb=item.get("prioritizeVerb") or "",
                bind_verb=item.get("bindVerb") or "",
                weight=item.get("weight") or 0,
                enable_https=bool(item.get("enableHTTPS")),
                tls_config=tls_config,
                http_timeout=_duration(item.get("httpTimeout")),
                node_cache_capable=bool(item.get("nodeCacheCapable")),
                managed_resources=tuple(resources),
                ignorable=bool(item.get("ignorable")),
                index=i,
            )
        )
    return [e for e in out if not e.ignorable] + [e for e in out if e.ignorable]


def apply_ignored_resources(profiles: list[Profile], extenders: list[Extender]) -> None:
    """Resources an extender manages with ``ignoredByScheduler`` become NodeResourcesFit's
    ``ignoredResources`` in every profile (replacing what the file set there, as kube's
    ``buildExtenders`` does: the extender's list takes precedence)."""
    ignored = [r.name for e in extenders for r in e.managed_resources if r.ignored_by_scheduler]
    if not ignored:
        return
    for profile in profiles:
        args = dict(profile.plugin_args.get(_NODE_RESOURCES_FIT) or {})
        args["ignoredResources"] = list(ignored)
        profile.plugin_args[_NODE_RESOURCES_FIT] = args
