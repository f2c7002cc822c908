"""A control plane leaves nothing behind: no process, no listening port, no directory.

Each test starts a control plane of its own (about 3 s each), besides the session's.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml

import kubesched.testing
from kubesched.testing import _procs
from kubesched.testing.controlplane import (
    BIN_DIR_ENV,
    Binaries,
    ControlPlane,
    ControlPlaneError,
)

_PACKAGE_ROOT = Path(kubesched.testing.__file__).resolve().parents[2]


def children_of(pid: int) -> list[int]:
    """Live (non-zombie) processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, ppid = fields[0], int(fields[1])
        if ppid == pid and state != "Z":
            found.append(int(stat.parent.name))
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: list[int], timeout: float = 15.0) -> list[int]:
    """The processes among ``pids`` still running after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (alive := [p for p in pids if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def wait_listening(ports: list[int], timeout: float = 5.0) -> list[int]:
    """The ports among ``ports`` still taken after ``timeout``: the kernel closes a killed
    process's connections, then its sockets, a moment after the process is gone."""
    deadline = time.monotonic() + timeout
    while (taken := [p for p in ports if not _procs.port_is_free(p)]) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.1)
    return taken


def test_stop_ends_every_process_and_frees_every_port(binaries: Binaries):
    with ControlPlane(binaries) as cp:
        scheduler = cp.start_reference_scheduler({"profiles": [{"schedulerName": "lifecycle"}]})
        pids = [child.pid for child in cp.processes()]
        ports = [*cp.ports.values(), scheduler.port]
        workdir = cp.workdir
        assert len(pids) == 3 and all(running(p) for p in pids)
        assert not any(_procs.port_is_free(p) for p in ports)

    assert wait_gone(pids) == []
    assert wait_listening(ports) == []
    assert not workdir.exists()
    cp.stop()  # idempotent


def test_failed_start_says_why_and_leaves_nothing_behind(binaries: Binaries):
    cp = ControlPlane(binaries, extra_apiserver_args=["--no-such-flag"])

    with pytest.raises(ControlPlaneError) as failed:
        cp.start()

    message = str(failed.value)
    assert "kube-apiserver exited with code 1" in message
    assert "unknown flag: --no-such-flag" in message
    assert cp.processes() == []
    log = Path(message.split("its log ")[1].split()[0])
    assert log.name == "kube-apiserver.log" and not log.parent.exists()


def read_line(stream, timeout: float) -> str:
    """One line from a child's pipe, or '' after ``timeout``."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return line[0].strip() if line else ""


#: The longest `controlplane up` may take to exit on SIGINT or SIGTERM: kube-apiserver and then
#: etcd each get ``controlplane.STOP_GRACE_SECONDS`` (5 s) before SIGKILL, plus the
#: interpreter's own exit.
EXIT_BOUND_SECONDS = 15.0
#: Busy processes run beside the shutdown in the loaded cases: twice the machine's cores.
HOGS = 2 * (os.cpu_count() or 2)


@contextlib.contextmanager
def cpu_hogs(count: int, seconds: float = 120.0) -> Iterator[None]:
    """``count`` processes spinning on the CPU (each ends by itself after ``seconds``)."""
    spin = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@contextlib.contextmanager
def request_in_flight(kubeconfig: Path) -> Iterator[None]:
    """A POST whose body never comes, held open: kube-apiserver's graceful termination waits
    for it (up to its one-minute request timeout: 59.5 s measured) before it exits."""
    document = yaml.safe_load(kubeconfig.read_text())
    cluster, user = document["clusters"][0]["cluster"], document["users"][0]["user"]
    context = ssl.create_default_context(
        cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
    )
    with tempfile.TemporaryDirectory() as keys:
        cert, key = Path(keys, "client.crt"), Path(keys, "client.key")
        cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
        key.write_bytes(base64.b64decode(user["client-key-data"]))
        context.load_cert_chain(cert, key)
    url = urlparse(cluster["server"])
    raw = socket.create_connection((url.hostname, url.port), timeout=10)
    with context.wrap_socket(raw, server_hostname=url.hostname) as conn:
        conn.sendall(
            b"POST /api/v1/namespaces HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{" % url.netloc.encode()
        )
        time.sleep(0.5)  # read and in flight
        yield


@pytest.mark.parametrize(
    ("sig", "condition"),
    [
        (signal.SIGINT, ""),
        (signal.SIGTERM, ""),
        (signal.SIGKILL, ""),
        (signal.SIGINT, "loaded"),
        (signal.SIGTERM, "loaded"),
        (signal.SIGINT, "in-flight"),
    ],
    ids=["SIGINT", "SIGTERM", "SIGKILL", "SIGINT-loaded", "SIGTERM-loaded", "SIGINT-in-flight"],
)
def test_interrupted_session_leaves_no_process_behind(
    binaries: Binaries, sig: signal.Signals, condition: str
):
    """``controlplane up`` interrupted: nothing is left, within EXIT_BOUND_SECONDS, also with
    HOGS busy processes competing for the CPU, or with a request in flight that kube-apiserver's
    graceful termination would wait a minute for (the shutdown once took over 30 s on a loaded
    2-core machine)."""
    env = {
        **os.environ,
        BIN_DIR_ENV: str(binaries.directory),
        "PYTHONPATH": os.pathsep.join([str(_PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    cli = subprocess.Popen(
        [sys.executable, "-m", "kubesched.testing.controlplane", "up"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        kubeconfig = Path(read_line(cli.stdout, timeout=90))
        assert kubeconfig.is_file(), cli.stderr.read() if cli.poll() is not None else "no output"
        server = yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        port = urlparse(server).port
        workdir = kubeconfig.parent.parent
        pids = children_of(cli.pid)
        assert len(pids) == 2  # etcd and kube-apiserver

        with contextlib.ExitStack() as during:
            during.enter_context(cpu_hogs(HOGS if condition == "loaded" else 0))
            if condition == "in-flight":
                during.enter_context(request_in_flight(kubeconfig))
            began = time.monotonic()
            cli.send_signal(sig)
            cli.wait(90)
            took = time.monotonic() - began
            print(f"{'-'.join(filter(None, [sig.name, condition]))}: exited in {took:.1f}s")
            assert wait_gone(pids) == []

        assert took <= EXIT_BOUND_SECONDS, f"took {took:.1f}s to exit on {sig.name}"
        assert port is not None and wait_listening([port]) == []
        if sig != signal.SIGKILL:  # a killed parent cannot clean up; the kernel ends its children
            assert cli.returncode == 0
            assert not workdir.exists()
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
        if sig == signal.SIGKILL:
            subprocess.run(["rm", "-rf", str(workdir)], check=False)
