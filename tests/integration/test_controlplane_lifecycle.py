"""A control plane leaves nothing behind: no process, no listening port, no directory.

Each test starts a control plane of its own (about 3 s each), besides the session's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
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


@pytest.mark.parametrize(
    "sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name
)
def test_interrupted_session_leaves_no_process_behind(binaries: Binaries, sig: signal.Signals):
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

        cli.send_signal(sig)
        cli.wait(30)

        assert wait_gone(pids) == []
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
