"""The parts of a test cluster that do not depend on who runs the apiserver.

The binaries (built by ``tests/controlplane/build.sh``), the upstream kube-scheduler runner and
the base class of :class:`~kubesched.testing.controlplane.ControlPlane` and
:class:`~kubesched.testing.controlplane.ExistingCluster`. Import them from
:mod:`kubesched.testing.controlplane`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self

import yaml

from kubesched.testing import _procs

#: Points the integration tests at an existing cluster instead of starting one.
KUBECONFIG_ENV = "KUBESCHED_TEST_KUBECONFIG"
#: A directory holding ready-made ``etcd``, ``kube-apiserver`` and ``kube-scheduler`` binaries.
BIN_DIR_ENV = "KUBESCHED_CONTROLPLANE_BIN_DIR"
#: The root of build.sh's binary cache (default ``~/.cache/kubesched/controlplane``).
CACHE_ENV = "KUBESCHED_CONTROLPLANE_CACHE"

ADMIN_USER = "kubesched-admin"
ADMIN_GROUPS = ("system:masters",)
#: The user kube-apiserver's bootstrap RBAC grants the ``system:kube-scheduler`` and
#: ``system:volume-scheduler`` roles to.
SCHEDULER_USER = "system:kube-scheduler"

_BUILD_SCRIPT = Path("tests", "controlplane", "build.sh")  # in a kubesched checkout
#: Times a child is started on fresh ports when another process took one of them first.
PORT_RETRIES = 3
_EXIT_NO_GO = 3  # build.sh's exit code when Go is not installed


class ControlPlaneUnavailable(Exception):
    """Nothing to run a control plane with: no binaries and no Go to build them, or no
    ``cryptography`` package to make its certificates."""


class ControlPlaneError(RuntimeError):
    """The control plane could not be built or started; the message says why and where to look."""


@dataclass(frozen=True)
class Binaries:
    """The directory holding ``etcd``, ``kube-apiserver`` and ``kube-scheduler``."""

    directory: Path

    NAMES: ClassVar[tuple[str, ...]] = ("etcd", "kube-apiserver", "kube-scheduler")

    @property
    def etcd(self) -> Path:
        return self.directory / "etcd"

    @property
    def kube_apiserver(self) -> Path:
        return self.directory / "kube-apiserver"

    @property
    def kube_scheduler(self) -> Path:
        return self.directory / "kube-scheduler"

    @property
    def kube_controller_manager(self) -> Path:
        """Built by build.sh too; only some tests run it, so it is not in ``NAMES``."""
        return self.directory / "kube-controller-manager"

    def missing(self) -> list[str]:
        return [n for n in self.NAMES if not os.access(self.directory / n, os.X_OK)]


def locate_build_script() -> Path | None:
    """build.sh in the kubesched checkout this module runs from (editable install), or in the
    checkout that holds the current directory (a non-editable install, as in tox)."""
    here = Path(__file__).resolve().parents[3]
    cwd = Path.cwd().resolve()
    for root in (here, cwd, *cwd.parents):
        if (root / _BUILD_SCRIPT).is_file():
            return root / _BUILD_SCRIPT
    return None


def find_binaries(*, build: bool = True, build_script: Path | None = None) -> Binaries:
    """Locate the control-plane binaries, building them with build.sh when needed.

    Order: ``$KUBESCHED_CONTROLPLANE_BIN_DIR``; else build.sh's cache, built (or reused) by
    running ``build_script`` (default: :func:`locate_build_script`) when ``build`` is true.
    Build progress goes to stderr.

    Raises :class:`ControlPlaneUnavailable` when there is nothing to run and no Go to build
    with, and :class:`ControlPlaneError` when a build breaks.
    """
    if bin_dir := os.environ.get(BIN_DIR_ENV):
        binaries = Binaries(Path(bin_dir))
        if missing := binaries.missing():
            raise ControlPlaneUnavailable(
                f"{BIN_DIR_ENV}={bin_dir} lacks executable {', '.join(missing)}"
            )
        return binaries
    script = build_script or locate_build_script()
    if script is None or not script.is_file():
        raise ControlPlaneUnavailable(
            f"no control-plane build script ({script or _BUILD_SCRIPT} not found from here or "
            f"{Path.cwd()}); run from a kubesched checkout, or set {BIN_DIR_ENV} or "
            f"{KUBECONFIG_ENV}"
        )
    if not build:
        out = subprocess.run(
            ["bash", str(script), "--print-dir"], capture_output=True, text=True, check=True
        )
        binaries = Binaries(Path(out.stdout.strip().splitlines()[-1]))
        if missing := binaries.missing():
            raise ControlPlaneUnavailable(
                f"control-plane binaries not built yet ({', '.join(missing)} missing in "
                f"{binaries.directory}); run {script}"
            )
        return binaries
    # Stream build.sh's progress (a first build takes many minutes) and keep its last word.
    with subprocess.Popen(
        ["bash", str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as build_sh:
        assert build_sh.stderr is not None and build_sh.stdout is not None
        last_error = "(no output)"
        for line in build_sh.stderr:
            sys.stderr.write(line)
            last_error = line.strip() or last_error
        stdout = build_sh.stdout.read()
    returncode = build_sh.returncode
    if returncode == _EXIT_NO_GO:
        raise ControlPlaneUnavailable(last_error.removeprefix("build.sh: error: "))
    if returncode != 0:
        raise ControlPlaneError(last_error)
    binaries = Binaries(Path(stdout.strip().splitlines()[-1]))
    if missing := binaries.missing():
        raise ControlPlaneError(f"build.sh left no {', '.join(missing)} in {binaries.directory}")
    return binaries


def current_user(kubeconfig: Mapping[str, Any]) -> dict[str, Any]:
    contexts = {c["name"]: c["context"] for c in kubeconfig.get("contexts") or []}
    users = {u["name"]: u.get("user") or {} for u in kubeconfig.get("users") or []}
    context = contexts.get(kubeconfig.get("current-context", ""), {})
    return dict(users.get(context.get("user", ""), {}))


def safe_file_stem(user: str, groups: tuple[str, ...] = ()) -> str:
    """A file name for an identity: ``system:kube-scheduler`` -> ``system-kube-scheduler-<h>``."""
    identity = "_".join((user, *groups))
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", identity).strip("-") or "user"
    if stem != identity:
        # Keep distinct identities apart even when they differ only in replaced characters.
        stem += "-" + hashlib.sha256(identity.encode()).hexdigest()[:6]
    return stem


class ReferenceScheduler:
    """A running upstream kube-scheduler (or kube-controller-manager); stop it with :meth:`stop`
    or a ``with`` block."""

    def __init__(
        self, child: _procs.Child, config_path: Path, port: int, startup_seconds: float
    ) -> None:
        self.child = child
        self.config_path = config_path
        self.port = port
        #: Seconds from start until its /readyz answered.
        self.startup_seconds = startup_seconds
        #: Prometheus metrics, readable without credentials.
        self.metrics_url = f"https://127.0.0.1:{port}/metrics"

    @property
    def log_path(self) -> Path:
        return self.child.log_path

    def alive(self) -> bool:
        return self.child.alive()

    def stop(self) -> None:
        self.child.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Cluster:
    """What :class:`ControlPlane` and :class:`ExistingCluster` share: a workdir, per-identity
    kubeconfigs and reference schedulers."""

    admin_kubeconfig: Path
    server: str
    #: Seconds from start() until the apiserver was ready (0 for an existing cluster).
    startup_seconds: float = 0.0

    def __init__(self, binaries: Binaries | None, workdir: Path | None, keep_workdir: bool) -> None:
        self._binaries = binaries
        self._given_workdir = workdir
        self._keep_workdir = keep_workdir
        self._workdir: Path | None = None
        self._schedulers: list[ReferenceScheduler] = []
        self._scheduler_count = 0
        self._kubeconfigs: dict[tuple[str, tuple[str, ...]], Path] = {}

    @property
    def workdir(self) -> Path:
        if self._workdir is None:
            raise ControlPlaneError(f"{type(self).__name__} is not started; call start() first")
        return self._workdir

    def _make_workdir(self) -> Path:
        if self._given_workdir is not None:
            self._given_workdir.mkdir(parents=True, exist_ok=True)
            self._workdir = self._given_workdir
        else:
            self._workdir = Path(tempfile.mkdtemp(prefix="kubesched-controlplane-"))
        return self._workdir

    def _remove_workdir(self) -> None:
        if self._workdir is not None and not self._keep_workdir and self._given_workdir is None:
            shutil.rmtree(self._workdir, ignore_errors=True)
        self._workdir = None

    def kubeconfig_for(self, user: str, groups: Sequence[str] = ()) -> Path:
        """A kubeconfig that authenticates as ``user`` in ``groups``, written once and reused."""
        key = (user, tuple(groups))
        if key not in self._kubeconfigs:
            self._kubeconfigs[key] = self._write_kubeconfig(user, tuple(groups))
        return self._kubeconfigs[key]

    def _write_kubeconfig(self, user: str, groups: tuple[str, ...]) -> Path:
        raise NotImplementedError

    def start_reference_scheduler(
        self,
        config: str | Path | Mapping[str, Any],
        *,
        kubeconfig: Path | None = None,
        extra_args: Sequence[str] = (),
        timeout: float = 60.0,
    ) -> ReferenceScheduler:
        """Run the upstream kube-scheduler with ``config`` until the returned handle is stopped.

        ``config`` is a KubeSchedulerConfiguration: YAML text, a path to a YAML file, or a
        mapping. Leader election is switched off and ``clientConnection.kubeconfig`` set to
        ``kubeconfig`` (default: the ``system:kube-scheduler`` user, whom the apiserver's
        bootstrap RBAC gives the scheduler's roles). Returns once the scheduler's /readyz is ok.
        """
        if self._binaries is None:
            self._binaries = find_binaries()
        document = _scheduler_config(config)
        document.setdefault("leaderElection", {})["leaderElect"] = False
        kubeconfig = kubeconfig or self.kubeconfig_for(SCHEDULER_USER)
        document.setdefault("clientConnection", {})["kubeconfig"] = str(kubeconfig)

        self._scheduler_count += 1
        directory = self.workdir / f"kube-scheduler-{self._scheduler_count}"
        directory.mkdir(parents=True, exist_ok=True)
        config_path = directory / "config.yaml"
        config_path.write_text(yaml.safe_dump(document, sort_keys=False))
        # Its serving certificate is self-signed; only readiness is read through it here.
        insecure = ssl._create_unverified_context()
        began = time.monotonic()
        for attempt in range(1, PORT_RETRIES + 1):
            (port,) = _procs.free_ports(1)
            child = _procs.Child(
                "kube-scheduler",
                [
                    str(self._binaries.kube_scheduler),
                    f"--config={config_path}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={port}",
                    f"--cert-dir={directory / 'certs'}",
                    "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                    *extra_args,
                ],
                directory / "kube-scheduler.log",
            )
            try:
                _procs.wait_for_ok(
                    f"https://127.0.0.1:{port}/readyz",
                    child=child,
                    timeout=timeout,
                    context=insecure,
                )
                break
            except RuntimeError as e:
                child.stop()
                if "address already in use" not in str(e) or attempt == PORT_RETRIES:
                    raise ControlPlaneError(str(e)) from None
        scheduler = ReferenceScheduler(child, config_path, port, time.monotonic() - began)
        self._schedulers.append(scheduler)
        return scheduler

    def start_controller_manager(
        self,
        controllers: Sequence[str] = ("persistentvolume-binder-controller",),
        *,
        extra_args: Sequence[str] = (),
        timeout: float = 60.0,
    ) -> ReferenceScheduler:
        """Run kube-controller-manager with only ``controllers`` (default: the PV controller,
        which binds claims to volumes), as the cluster admin, until the handle is stopped.
        Returns once its /healthz is ok; stopped with the cluster."""
        if self._binaries is None:
            self._binaries = find_binaries()
        binary = self._binaries.kube_controller_manager
        if not os.access(binary, os.X_OK):
            raise ControlPlaneUnavailable(f"{binary} is not built (tests/controlplane/build.sh)")
        self._scheduler_count += 1
        directory = self.workdir / f"kube-controller-manager-{self._scheduler_count}"
        insecure = ssl._create_unverified_context()
        began = time.monotonic()
        for attempt in range(1, PORT_RETRIES + 1):
            (port,) = _procs.free_ports(1)
            child = _procs.Child(
                "kube-controller-manager",
                [
                    str(binary),
                    f"--kubeconfig={self.admin_kubeconfig}",
                    f"--controllers={','.join(controllers)}",
                    "--leader-elect=false",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={port}",
                    f"--cert-dir={directory / 'certs'}",
                    "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                    # Claims are bound on events; the periodic resync only catches up.
                    "--pvclaimbinder-sync-period=2s",
                    *extra_args,
                ],
                directory / "kube-controller-manager.log",
            )
            try:
                _procs.wait_for_ok(
                    f"https://127.0.0.1:{port}/healthz",
                    child=child,
                    timeout=timeout,
                    context=insecure,
                )
                break
            except RuntimeError as e:
                child.stop()
                if "address already in use" not in str(e) or attempt == PORT_RETRIES:
                    raise ControlPlaneError(str(e)) from None
        manager = ReferenceScheduler(child, directory / "none", port, time.monotonic() - began)
        self._schedulers.append(manager)
        return manager

    def _stop_schedulers(self) -> None:
        while self._schedulers:
            self._schedulers.pop().stop()

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _scheduler_config(config: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(config, Path):
        config = config.read_text()
    document = yaml.safe_load(config) if isinstance(config, str) else dict(config)
    if not isinstance(document, dict):
        raise ValueError(f"a KubeSchedulerConfiguration must be a mapping, not {document!r}")
    document.setdefault("apiVersion", "kubescheduler.config.k8s.io/v1")
    document.setdefault("kind", "KubeSchedulerConfiguration")
    return document
