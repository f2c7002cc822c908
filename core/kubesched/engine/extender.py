"""Calling the HTTP extenders a configuration names, as kube-scheduler v1.37 does (``extender.go``).

Every verb is ``POST {urlPrefix}/{verb}`` with a JSON body whose keys are the Go field names of
``k8s.io/kube-scheduler/extender/v1`` (the types have no JSON tags): ``ExtenderArgs``
``{"Pod", "Nodes", "NodeNames"}`` for filter and prioritize (``Nodes`` a NodeList, or ``NodeNames``
when the extender is ``nodeCacheCapable``; the other is ``null``), ``ExtenderBindingArgs``
``{"PodName", "PodNamespace", "PodUID", "Node"}`` for bind. Any status but 200 is an error, with
kube's message (``failed filter with extender at URL …, code 500``), and so is a body that does
not decode, a transport failure, a timeout (``httpTimeout``, default 5s) and an ``Error`` in the
answer.

Where the scheduler calls them (``kubesched.engine.algorithm``, ``kubesched.engine.scheduler``):
filter after
the Filter plugins, one extender after another over the nodes the previous ones kept; prioritize
after the Score plugins, each score times the weight times MaxNodeScore/MaxExtenderPriority added
to the totals (a prioritize error is never fatal); bind before the Bind plugins, by the first
interested binder. An extender is interested in a pod unless it has ``managedResources`` and
the pod's containers ask for none of them. An ``ignorable`` extender's filter or bind error is
logged and skipped; any other one fails the pod's attempt (``SchedulerError``).

The HTTP client is urllib3 (the Kubernetes client's own transport): one pool per extender.
"""

from __future__ import annotations

import base64
import datetime
import json
import logging
import os
import ssl
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import urllib3

from kubesched.api.objects import Node, ObjectError, Pod
from kubesched.config.extenders import Extender
from kubesched.framework.nodeinfo import NodeInfo

__all__ = [
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "ExtenderError",
    "FilterResult",
    "HTTPExtender",
    "binding_args",
    "extender_args",
    "node_list",
    "to_json",
]

log = logging.getLogger(__name__)

#: kube's ``framework.ExtenderName``: the pseudo-plugin a pod rejected by an extender records
#: (any cluster event requeues it, as no extender registers events).
EXTENDER_NAME = "Extender"
#: ``extenderv1.MaxExtenderPriority``: extenders score 0–10.
MAX_EXTENDER_PRIORITY = 10
_JSON = {"Content-Type": "application/json"}


class ExtenderError(Exception):
    """A call to an extender failed; ``str()`` is the message kube-scheduler reports."""


def _go_json_default(value: Any) -> Any:
    # Manifests loaded with PyYAML can hold timestamps as datetimes; Go writes RFC 3339.
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return value.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(value: Any) -> bytes:
    """``value`` as the compact JSON Go's encoder writes (no spaces, UTF-8)."""
    return json.dumps(value, separators=(",", ":"), default=_go_json_default).encode()


def node_list(nodes: Iterable[NodeInfo]) -> dict[str, Any]:
    """A ``v1.NodeList`` as Go marshals it: ``metadata`` (an empty ListMeta) and ``items``."""
    return {"metadata": {}, "items": [dict(info.node.raw) for info in nodes if info.node]}


def extender_args(pod: Pod, nodes: Sequence[NodeInfo], node_cache_capable: bool) -> dict[str, Any]:
    """``ExtenderArgs``: the pod, and either the nodes (a NodeList) or only their names."""
    if node_cache_capable:
        return {"Pod": pod.raw, "Nodes": None, "NodeNames": [info.name for info in nodes]}
    return {"Pod": pod.raw, "Nodes": node_list(nodes), "NodeNames": None}


def binding_args(pod: Pod, node_name: str) -> dict[str, Any]:
    """``ExtenderBindingArgs``."""
    return {
        "PodName": pod.name,
        "PodNamespace": pod.namespace,
        "PodUID": pod.uid,
        "Node": node_name,
    }


@dataclass
class FilterResult:
    """An extender's filter answer over the nodes it was given."""

    feasible: list[NodeInfo]
    failed: dict[str, str] = field(default_factory=dict)
    failed_and_unresolvable: dict[str, str] = field(default_factory=dict)


def _pem(data: str) -> str:
    """``certData``/``keyData``/``caData`` are Go ``[]byte``: base64 in YAML and JSON."""
    try:
        return base64.b64decode(data, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return data  # written as PEM text


def _ssl_context(config: Extender) -> ssl.SSLContext | None:
    """kube's ``makeTransport``: TLS settings from ``tlsConfig``; with ``enableHTTPS`` and no
    CA, the server's certificate is not verified."""
    tls = config.tls_config
    if tls is None and not config.enable_https:
        return None
    context = ssl.create_default_context()
    has_ca = tls is not None and bool(tls.ca_file or tls.ca_data)
    insecure = (tls is not None and tls.insecure) or (config.enable_https and not has_ca)
    if tls is not None and has_ca:
        context = ssl.create_default_context(
            cafile=tls.ca_file or None, cadata=_pem(tls.ca_data) if tls.ca_data else None
        )
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        # Asked for in the configuration (kube's rule for enableHTTPS without a CA): no warning
        # per request.
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    if tls is not None and (tls.cert_file or tls.cert_data):
        if tls.cert_file:
            context.load_cert_chain(tls.cert_file, tls.key_file or None)
        else:
            # ssl loads a client certificate from files only: a private temporary file each.
            with tempfile.TemporaryDirectory() as directory:
                cert, key = os.path.join(directory, "cert"), os.path.join(directory, "key")
                with open(cert, "w") as f:
                    f.write(_pem(tls.cert_data))
                with open(key, "w") as f:
                    f.write(_pem(tls.key_data))
                context.load_cert_chain(cert, key)
    return context


class HTTPExtender:
    """One configured extender (kube's ``HTTPExtender``)."""

    def __init__(self, config: Extender) -> None:
        self.config = config
        self.name = config.url_prefix
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        pool_kw: dict[str, Any] = {}
        context = _ssl_context(config)
        if context is not None:
            pool_kw["ssl_context"] = context
            if config.tls_config is not None and config.tls_config.server_name:
                pool_kw["server_hostname"] = config.tls_config.server_name
        self._pool = urllib3.PoolManager(
            num_pools=2,
            maxsize=16,
            timeout=urllib3.Timeout(total=config.http_timeout),
            retries=False,
            **pool_kw,
        )

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name!r})"

    # -- what it does --------------------------------------------------------------------------
    @property
    def ignorable(self) -> bool:
        return self.config.ignorable

    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    @property
    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    @property
    def weight(self) -> int:
        return self.config.weight

    def is_interested(self, pod: Pod) -> bool:
        """kube's ``IsInterested``: no managed resources, or a container or init container that
        requests or limits one of them."""
        if not self.managed_resources:
            return True
        spec = pod.raw.get("spec") or {}
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or ():
                resources = container.get("resources") or {}
                for kind in ("requests", "limits"):
                    if self.managed_resources.intersection(resources.get(kind) or ()):
                        return True
        return False

    # -- the verbs -----------------------------------------------------------------------------
    def filter(self, pod: Pod, nodes: list[NodeInfo]) -> FilterResult:
        """The nodes the extender keeps, and why it rejected the others."""
        if not self.is_filter:
            return FilterResult(list(nodes))
        cache = self.config.node_cache_capable
        answer = self._send(self.config.filter_verb, extender_args(pod, nodes, cache))
        if not isinstance(answer, Mapping):
            raise self._bad_answer("filter", "an ExtenderFilterResult object", answer)
        if answer.get("Error"):
            raise ExtenderError(str(answer["Error"]))
        by_name = {info.name: info for info in nodes}
        feasible: list[NodeInfo] = []
        names = answer.get("NodeNames")
        if cache and names is not None:
            if not isinstance(names, list):
                raise self._bad_answer("filter", "NodeNames as a list of strings", names)
            for name in names:
                if name not in by_name:
                    raise ExtenderError(
                        f"extender {self.name!r} claims a filtered node {name!r} which is not "
                        "found in the input node list"
                    )
                feasible.append(by_name[name])
        elif answer.get("Nodes") is not None:
            items = answer["Nodes"].get("items") if isinstance(answer["Nodes"], Mapping) else None
            if not isinstance(items, list | type(None)):
                raise self._bad_answer("filter", "Nodes as a NodeList", answer["Nodes"])
            for item in items or ():
                name = ((item or {}).get("metadata") or {}).get("name", "")
                if name not in by_name:
                    raise ExtenderError(
                        f"extender {self.name!r} claims a filtered node {name!r} which is not "
                        "found in the input node list"
                    )
                # As kube-scheduler v1.37 does, the nodes answered become new NodeInfos of the
                # answer's Node objects, without their pods: the Score plugins that run after
                # (NodeResourcesFit, NodeResourcesBalancedAllocation) see those nodes empty.
                # A nodeCacheCapable extender's NodeNames keep the scheduler's own NodeInfos.
                try:
                    feasible.append(NodeInfo(Node(item)))
                except ObjectError as exc:
                    raise ExtenderError(f"extender {self.name!r} filter: {exc}") from None
        return FilterResult(
            feasible,
            self._failed_map(answer.get("FailedNodes")),
            self._failed_map(answer.get("FailedAndUnresolvableNodes")),
        )

    def prioritize(self, pod: Pod, nodes: list[NodeInfo]) -> tuple[dict[str, int], int]:
        """Host -> score (0–10, as the extender gave it), and the extender's weight."""
        if not self.is_prioritizer:
            return {info.name: 0 for info in nodes}, 0
        cache = self.config.node_cache_capable
        answer = self._send(self.config.prioritize_verb, extender_args(pod, nodes, cache))
        if answer is None:
            return {}, self.weight
        if not isinstance(answer, list):
            raise self._bad_answer("prioritize", "a HostPriorityList array", answer)
        scores: dict[str, int] = {}
        for entry in answer:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("Score", 0), int):
                raise self._bad_answer("prioritize", "[{Host, Score}] entries", entry)
            scores[str(entry.get("Host", ""))] = int(entry.get("Score", 0))
        return scores, self.weight

    def bind(self, pod: Pod, node_name: str) -> None:
        """Ask the extender to bind the pod; raises :class:`ExtenderError` when it did not."""
        if not self.is_binder:
            raise ExtenderError("unexpected empty bindVerb in extender")
        answer = self._send(self.config.bind_verb, binding_args(pod, node_name))
        if isinstance(answer, Mapping) and answer.get("Error"):
            raise ExtenderError(str(answer["Error"]))

    def process_preemption(
        self,
        pod: Pod,
        victims: Mapping[str, tuple[list[Pod], int]],
        snapshot: Any,
    ) -> dict[str, tuple[list[Pod], int]]:
        """kube's ``ProcessPreemption``: node -> (victims, PDB violations) as the extender
        narrows them. Sent as ``NodeNameToVictims`` (whole pods) or, to a nodeCacheCapable
        extender, ``NodeNameToMetaVictims`` (UIDs); the answer is always
        ``NodeNameToMetaVictims``, turned back into pods through ``snapshot``."""
        if not self.supports_preemption:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.name} but run into "
                "ProcessPreemption"
            )
        meta = {
            node: {"Pods": [{"UID": p.uid} for p in pods], "NumPDBViolations": violations}
            for node, (pods, violations) in victims.items()
        }
        if self.config.node_cache_capable:
            args = {"Pod": pod.raw, "NodeNameToVictims": None, "NodeNameToMetaVictims": meta}
        else:
            full = {
                node: {"Pods": [p.raw for p in pods], "NumPDBViolations": violations}
                for node, (pods, violations) in victims.items()
            }
            args = {"Pod": pod.raw, "NodeNameToVictims": full, "NodeNameToMetaVictims": None}
        answer = self._send(self.config.preempt_verb, args)
        if not isinstance(answer, Mapping):
            raise self._bad_answer("preempt", "an ExtenderPreemptionResult object", answer)
        out: dict[str, tuple[list[Pod], int]] = {}
        for node, entry in (answer.get("NodeNameToMetaVictims") or {}).items():
            info = snapshot.get(node)
            if info is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node}"')
            entry = entry or {}
            pods: list[Pod] = []
            by_uid = {p.uid: p for p in info.pods.values()}
            for meta_pod in entry.get("Pods") or ():
                uid = (meta_pod or {}).get("UID", "")
                if uid not in by_uid:
                    raise ExtenderError(
                        f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                        f"{node}, but the pod is not found on that node"
                    )
                pods.append(by_uid[uid])
            out[node] = (pods, int(entry.get("NumPDBViolations") or 0))
        return out

    # -- the wire ------------------------------------------------------------------------------
    def _send(self, verb: str, body: Any) -> Any:
        url = self.name.rstrip("/") + "/" + verb
        try:
            response = self._pool.request("POST", url, body=to_json(body), headers=_JSON)
        except urllib3.exceptions.HTTPError as exc:
            raise ExtenderError(f'Post "{url}": {_reason(exc)}') from None
        if response.status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {response.status}")
        try:
            return json.loads(response.data) if response.data.strip() else None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ExtenderError(f"decoding the answer of {url}: {exc}") from None

    def _failed_map(self, value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self._bad_answer("filter", "a map of node name to message", value)
        return {str(k): str(v) for k, v in value.items()}

    def _bad_answer(self, verb: str, wanted: str, got: Any) -> ExtenderError:
        shown = json.dumps(got, default=str)[:200]
        return ExtenderError(f"extender {self.name!r} {verb}: expected {wanted}, got {shown}")

    def close(self) -> None:
        self._pool.clear()


def _reason(exc: urllib3.exceptions.HTTPError) -> str:
    """A transport failure in a few words (Go says e.g. ``connect: connection refused``)."""
    text = str(getattr(exc, "reason", None) or exc)
    if "Connection refused" in text:
        return "connect: connection refused"
    if isinstance(exc, urllib3.exceptions.TimeoutError):  # NewConnectionError is one too
        return "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
    return text
