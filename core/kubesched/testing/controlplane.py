"""A real, throw-away Kubernetes control plane for integration tests, benchmarks and by hand.

:class:`ControlPlane` starts etcd and kube-apiserver (RBAC on, client-certificate users) on free
loopback ports in a temporary directory and removes every trace of them on :meth:`stop`, also
when a test fails or the run is interrupted. :class:`ExistingCluster` offers the same interface
over a cluster named by a kubeconfig (``KUBESCHED_TEST_KUBECONFIG``). Either can run the upstream
kube-scheduler with a given KubeSchedulerConfiguration for parity tests and benchmarks.

The binaries come from ``tests/controlplane/build.sh`` (see its README), found by
:func:`find_binaries`. By hand::

    python -m kubesched.testing.controlplane up [--user NAME[=GROUP,...]]... [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import ssl
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import yaml

from kubesched.testing import _procs
from kubesched.testing._cluster import (
    ADMIN_GROUPS,
    ADMIN_USER,
    BIN_DIR_ENV,
    CACHE_ENV,
    KUBECONFIG_ENV,
    PORT_RETRIES,
    Binaries,
    Cluster,
    ControlPlaneError,
    ControlPlaneUnavailable,
    ReferenceScheduler,
    current_user,
    find_binaries,
    safe_file_stem,
)

if TYPE_CHECKING:
    from kubesched.testing import _certs

__all__ = [
    "BIN_DIR_ENV",
    "CACHE_ENV",
    "KUBECONFIG_ENV",
    "Binaries",
    "Cluster",
    "ControlPlane",
    "ControlPlaneError",
    "ControlPlaneUnavailable",
    "ExistingCluster",
    "ReferenceScheduler",
    "create_ready_node",
    "find_binaries",
    "new_api_client",
    "ready_node",
    "what_is_missing",
]

#: How long etcd and kube-apiserver each get to exit on SIGTERM before SIGKILL.
STOP_GRACE_SECONDS = 5.0


def new_api_client(kubeconfig: Path | str) -> Any:
    """A ``kubernetes.client.ApiClient`` for ``kubeconfig``, leaving the global config alone.

    Honours the kubeconfig user's ``as``/``as-groups`` (impersonation, which the Python client
    ignores), as written by :meth:`ExistingCluster.kubeconfig_for`; one group at most.
    """
    from kubernetes import config

    client: Any = config.new_client_from_config(config_file=str(kubeconfig))  # type: ignore[no-untyped-call]
    user = current_user(yaml.safe_load(Path(kubeconfig).read_text()))
    if impersonate := user.get("as"):
        groups = user.get("as-groups") or []
        if len(groups) > 1:
            raise ValueError(
                f"{kubeconfig}: the Python client can send one Impersonate-Group header, "
                f"not {len(groups)} ({groups}); ask for one group"
            )
        client.default_headers["Impersonate-User"] = impersonate
        if groups:
            client.default_headers["Impersonate-Group"] = groups[0]
    return client


def ready_node(
    name: str,
    *,
    cpu: str = "4",
    memory: str = "32Gi",
    pods: str = "110",
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Node manifest as scheduler_perf makes them: capacity = allocatable, Ready, no kubelet.

    Nothing marks such a node NotReady: no controller-manager runs.
    """
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "no kubelet"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"capacity": resources, "allocatable": resources, "conditions": [ready]},
    }


NOT_READY_TAINT = "node.kubernetes.io/not-ready"


def create_ready_node(api_client: Any, node: Mapping[str, Any]) -> Any:
    """Create ``node`` (a :func:`ready_node` manifest) and return the stored ``V1Node``.

    Does by hand what a kubelet and the node lifecycle controller would: kube-apiserver v1.37
    keeps the status sent with a Node on create, but should it drop it (as for most kinds) the
    status is written through ``nodes/status``; and the ``node.kubernetes.io/not-ready`` taint
    that the TaintNodesByCondition admission plugin puts on new nodes is lifted.
    """
    from kubernetes import client

    # Any: the client accepts plain dicts where its signatures say V1Node.
    core_v1: Any = client.CoreV1Api(api_client)
    name = node["metadata"]["name"]
    created = core_v1.create_node(node)
    if created.status is None or not created.status.allocatable:
        created = core_v1.patch_node_status(name, {"status": node["status"]})
    taints = created.spec.taints or []
    if any(t.key == NOT_READY_TAINT for t in taints):
        kept = [core_v1.api_client.sanitize_for_serialization(t) for t in taints]
        kept = [t for t in kept if t["key"] != NOT_READY_TAINT]
        created = core_v1.patch_node(name, {"spec": {"taints": kept or None}})
    return created


def _load_certs() -> Any:
    """The certificate helpers, which need the ``cryptography`` package."""
    try:
        from kubesched.testing import _certs
    except ImportError as e:
        raise ControlPlaneUnavailable(
            f"the 'cryptography' package, which makes the control plane's certificates, cannot "
            f"be imported ({e}); pip install 'cryptography>=41'"
        ) from None
    return _certs


class ControlPlane(Cluster):
    """etcd and kube-apiserver on free loopback ports in a temporary directory.

    Use as a context manager, or call :meth:`start` and :meth:`stop` (stop is idempotent and
    also runs at interpreter exit). Logs are ``etcd.log`` and ``kube-apiserver.log`` in
    :attr:`workdir`; pass ``keep_workdir=True`` to keep them after stop. Fault tests stop and
    start either process in place with :meth:`restart_apiserver` and :meth:`restart_etcd`.
    """

    def __init__(
        self,
        binaries: Binaries | None = None,
        *,
        workdir: Path | None = None,
        keep_workdir: bool = False,
        startup_timeout: float = 90.0,
        extra_apiserver_args: Sequence[str] = (),
        extra_etcd_args: Sequence[str] = (),
    ) -> None:
        super().__init__(binaries, workdir, keep_workdir)
        self.startup_timeout = startup_timeout
        self.extra_apiserver_args = list(extra_apiserver_args)
        self.extra_etcd_args = list(extra_etcd_args)
        self._etcd: _procs.Child | None = None
        self._apiserver: _procs.Child | None = None
        self._ca: _certs.CertificateAuthority | None = None
        self.ports: dict[str, int] = {}

    def start(self) -> Self:
        """Start etcd and kube-apiserver and wait until the apiserver is ready.

        On failure nothing is left running and the directory is removed (unless kept); the
        ``ControlPlaneError`` carries the end of the failing process's log.
        """
        if self._apiserver is not None:
            return self
        _procs.stop_on_sigterm()
        if self._binaries is None:
            self._binaries = find_binaries()
        certs = _load_certs()
        began = time.monotonic()
        workdir = self._make_workdir()
        try:
            self._start_processes(certs)
        except BaseException as e:
            self._stop_processes()
            kept = self._keep_workdir or self._given_workdir is not None
            self._remove_workdir()
            if not isinstance(e, RuntimeError):
                raise
            hint = "" if kept else " (removed; keep_workdir=True or `up --keep` keeps it)"
            raise ControlPlaneError(f"{e}\n{workdir}{hint}") from None
        self.admin_kubeconfig = self.kubeconfig_for(ADMIN_USER, ADMIN_GROUPS)
        self.startup_seconds = time.monotonic() - began
        return self

    def _start_processes(self, certs: Any) -> None:
        pki = self.workdir / "pki"
        self._ca = certs.CertificateAuthority(pki)
        serving = self._ca.issue_serving("apiserver")
        admin = self._ca.issue_client(ADMIN_USER, ADMIN_GROUPS)
        sa_keys = certs.write_service_account_keys(pki)
        for attempt in range(1, PORT_RETRIES + 1):
            etcd_port, peer_port, api_port = _procs.free_ports(3)
            self.ports = {"etcd": etcd_port, "etcd-peer": peer_port, "apiserver": api_port}
            self.server = f"https://127.0.0.1:{api_port}"
            try:
                self._start_etcd(etcd_port, peer_port)
                self._apiserver_keys = (serving, sa_keys, admin)
                self._start_apiserver(etcd_port, api_port, serving, sa_keys, admin)
                return
            except RuntimeError as e:
                self._stop_processes()
                if "address already in use" not in str(e) or attempt == PORT_RETRIES:
                    raise

    def restart_apiserver(self, downtime: float = 0.0) -> float:
        """Stop kube-apiserver, wait ``downtime`` seconds, start it again on the same port (etcd
        keeps the data); returns the seconds until it was ready again. For fault tests."""
        if self._apiserver is None:
            raise ControlPlaneError("ControlPlane is not started; call start() first")
        began = time.monotonic()
        self._apiserver.stop()
        time.sleep(downtime)
        serving, sa_keys, admin = self._apiserver_keys
        self._start_apiserver(self.ports["etcd"], self.ports["apiserver"], serving, sa_keys, admin)
        return time.monotonic() - began

    def restart_etcd(self, downtime: float = 0.0) -> float:
        """Stop etcd, wait ``downtime`` seconds, start it again on the same ports and data
        directory (kube-apiserver keeps running and reconnects); returns the seconds until the
        apiserver answered a read that needs etcd again. For fault tests."""
        if self._etcd is None or self._apiserver is None:
            raise ControlPlaneError("ControlPlane is not started; call start() first")
        assert self._ca is not None
        began = time.monotonic()
        self._etcd.stop()
        time.sleep(downtime)
        self._start_etcd(self.ports["etcd"], self.ports["etcd-peer"])
        _, _, admin = self._apiserver_keys
        context = ssl.create_default_context(cafile=str(self._ca.cert_path))
        context.load_cert_chain(admin.cert_path, admin.key_path)
        # A quorum read (no resourceVersion): served from etcd, not from the watch cache.
        _procs.wait_for_ok(
            f"{self.server}/api/v1/namespaces?limit=1",
            child=self._apiserver,
            timeout=self.startup_timeout,
            context=context,
        )
        return time.monotonic() - began

    def _start_etcd(self, port: int, peer_port: int) -> None:
        assert self._binaries is not None
        client_url, peer_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{peer_port}"
        self._etcd = _procs.Child(
            "etcd",
            [
                str(self._binaries.etcd),
                "--name=kubesched-test",
                f"--data-dir={self.workdir / 'etcd-data'}",
                f"--listen-client-urls={client_url}",
                f"--advertise-client-urls={client_url}",
                f"--listen-peer-urls={peer_url}",
                f"--initial-advertise-peer-urls={peer_url}",
                f"--initial-cluster=kubesched-test={peer_url}",
                # A test cluster's data dies with it: durability buys nothing and costs latency.
                "--unsafe-no-fsync",
                "--log-level=warn",
                *self.extra_etcd_args,
            ],
            self.workdir / "etcd.log",
        )
        _procs.wait_for_ok(f"{client_url}/health", child=self._etcd, timeout=self.startup_timeout)

    def _start_apiserver(
        self,
        etcd_port: int,
        port: int,
        serving: _certs.KeyPair,
        sa_keys: _certs.KeyPair,
        admin: _certs.KeyPair,
    ) -> None:
        assert self._binaries is not None and self._ca is not None
        self._apiserver = _procs.Child(
            "kube-apiserver",
            [
                str(self._binaries.kube_apiserver),
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                # The endpoint reconciler refuses loopback addresses; nothing here needs the
                # endpoints of the `kubernetes` service anyway.
                "--endpoint-reconciler-type=none",
                f"--secure-port={port}",
                f"--cert-dir={self.workdir / 'apiserver-certs'}",
                f"--tls-cert-file={serving.cert_path}",
                f"--tls-private-key-file={serving.key_path}",
                f"--client-ca-file={self._ca.cert_path}",
                "--authorization-mode=RBAC",
                "--service-cluster-ip-range=10.0.0.0/24",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-key-file={sa_keys.cert_path}",
                f"--service-account-signing-key-file={sa_keys.key_path}",
                # No controller-manager runs: nothing would create the service-account tokens
                # ServiceAccount admission expects, nor lift the not-ready taint that
                # TaintNodesByCondition puts on every new node once the node is Ready.
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
                "--allow-privileged=true",
                "--profiling=false",
                *self.extra_apiserver_args,
            ],
            self.workdir / "kube-apiserver.log",
        )
        context = ssl.create_default_context(cafile=str(self._ca.cert_path))
        context.load_cert_chain(admin.cert_path, admin.key_path)
        for ready in ("readyz", "api/v1/namespaces/default"):
            # /readyz does not wait for the bootstrap controller to create namespace default.
            _procs.wait_for_ok(
                f"{self.server}/{ready}",
                child=self._apiserver,
                timeout=self.startup_timeout,
                context=context,
            )

    def _write_kubeconfig(self, user: str, groups: tuple[str, ...]) -> Path:
        if self._ca is None:
            raise ControlPlaneError("ControlPlane is not started; call start() first")
        is_admin = (user, groups) == (ADMIN_USER, ADMIN_GROUPS)
        stem = "admin" if is_admin else safe_file_stem(user, groups)
        path: Path = _load_certs().write_kubeconfig(
            self.workdir / "kubeconfigs" / f"{stem}.kubeconfig",
            server=self.server,
            ca_pem=self._ca.cert_pem,
            name=user,
            client=self._ca.issue_client(user, groups),
        )
        return path

    def processes(self) -> list[_procs.Child]:
        """The children still registered: etcd, kube-apiserver and any reference schedulers."""
        own = [c for c in (self._etcd, self._apiserver) if c is not None]
        return own + [s.child for s in self._schedulers]

    def _stop_processes(self) -> None:
        self._stop_schedulers()
        # The apiserver first, so that it never sees its storage vanish under it. Each gets
        # STOP_GRACE_SECONDS after SIGTERM, then SIGKILL: kube-apiserver's graceful termination
        # waits for in-flight requests (up to a minute), which on a loaded machine outlasted the
        # callers' patience; nothing here outlives the control plane, so a kill loses nothing.
        for child in (self._apiserver, self._etcd):
            if child is not None:
                child.stop(timeout=STOP_GRACE_SECONDS)
        self._apiserver = self._etcd = None

    def stop(self) -> None:
        """Stop every process this control plane started and remove its directory."""
        self._stop_processes()
        self._kubeconfigs.clear()
        self._remove_workdir()


class ExistingCluster(Cluster):
    """A cluster that someone else runs, reached through an admin ``kubeconfig``.

    :meth:`kubeconfig_for` writes kubeconfigs that impersonate the identity (``as`` and
    ``as-groups``), which Go clients honour and :func:`new_api_client` does too, so the admin
    must be allowed to impersonate.
    """

    def __init__(self, kubeconfig: Path, *, binaries: Binaries | None = None) -> None:
        super().__init__(binaries, None, False)
        if not kubeconfig.is_file():
            raise ControlPlaneError(f"{KUBECONFIG_ENV}={kubeconfig}: no such file")
        self.admin_kubeconfig = kubeconfig
        self._document: dict[str, Any] = yaml.safe_load(kubeconfig.read_text()) or {}
        contexts = {c["name"]: c["context"] for c in self._document.get("contexts") or []}
        context = contexts.get(self._document.get("current-context", ""))
        clusters = {c["name"]: c["cluster"] for c in self._document.get("clusters") or []}
        if context is None or context.get("cluster") not in clusters:
            raise ControlPlaneError(f"{kubeconfig}: no usable current-context")
        self.server = clusters[context["cluster"]]["server"]

    def start(self) -> Self:
        if self._workdir is None:
            self._make_workdir()
        return self

    def _write_kubeconfig(self, user: str, groups: tuple[str, ...]) -> Path:
        document = yaml.safe_load(yaml.safe_dump(self._document))
        user_entry = current_user(document)
        user_entry["as"] = user
        if groups:
            user_entry["as-groups"] = list(groups)
        current = {c["name"]: c["context"] for c in document["contexts"]}[
            document["current-context"]
        ]
        for entry in document.get("users") or []:
            if entry["name"] == current["user"]:
                entry["user"] = user_entry
        path = self.workdir / "kubeconfigs" / f"{safe_file_stem(user, groups)}.kubeconfig"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        return path

    def stop(self) -> None:
        self._stop_schedulers()
        self._kubeconfigs.clear()
        self._remove_workdir()


def what_is_missing(build_script: Path | None = None) -> str | None:
    """Why no control plane can be had here, found without building anything; None if one can
    (an existing cluster is named, Go can build one, or the binaries are already built)."""
    if os.environ.get(KUBECONFIG_ENV) or shutil.which("go"):
        return None
    try:
        find_binaries(build=False, build_script=build_script)
    except ControlPlaneUnavailable as e:
        if os.environ.get(BIN_DIR_ENV):
            return str(e)
        return f"no Go and no built binaries; install Go >= 1.26 or set {KUBECONFIG_ENV}"
    return None


def _parse_identity(text: str) -> tuple[str, list[str]]:
    """``alice=team-a,team-b`` -> ``("alice", ["team-a", "team-b"])``; names may contain ':'."""
    user, _, groups = text.partition("=")
    return user, [g for g in groups.split(",") if g]


def main(argv: Sequence[str] | None = None) -> int:
    """``up``: run a control plane until Ctrl-C; ``build``: build or locate the binaries."""
    parser = argparse.ArgumentParser(
        prog="python -m kubesched.testing.controlplane",
        description="A throw-away etcd + kube-apiserver (RBAC on) for kubesched.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="start a control plane and keep it up until Ctrl-C")
    up.add_argument(
        "--user",
        action="append",
        default=[],
        metavar="NAME[=GROUP,...]",
        help="also write a kubeconfig for this identity (repeatable)",
    )
    up.add_argument("--workdir", type=Path, help="use this directory (kept) instead of a temp dir")
    up.add_argument("--keep", action="store_true", help="keep the temp dir (logs) after stopping")
    commands.add_parser("build", help="build (or reuse) the binaries and print their directory")
    args = parser.parse_args(argv)

    try:
        if args.command == "build":
            print(find_binaries().directory)
            return 0
        with ControlPlane(workdir=args.workdir, keep_workdir=args.keep) as cp:
            print(
                f"control plane ready in {cp.startup_seconds:.1f}s at {cp.server}", file=sys.stderr
            )
            print(f"logs and certificates: {cp.workdir}", file=sys.stderr)
            for identity in args.user:
                user, groups = _parse_identity(identity)
                print(
                    f"kubeconfig for {identity}: {cp.kubeconfig_for(user, groups)}", file=sys.stderr
                )
            print(f"export KUBECONFIG={cp.admin_kubeconfig}; Ctrl-C stops it", file=sys.stderr)
            print(cp.admin_kubeconfig, flush=True)
            while all(child.alive() for child in cp.processes()):
                time.sleep(1.0)
            dead = [c for c in cp.processes() if not c.alive()]
            for child in dead:
                print(
                    f"{child.name} exited; its log ends with:\n{child.log_tail()}", file=sys.stderr
                )
            return 1
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
        return 0
    except (ControlPlaneUnavailable, ControlPlaneError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
