"""A leader whose scheduling loop dies or hangs fails ``/healthz``; a liveness prober that acts
as the kubelet does (every ``periodSeconds``, ``failureThreshold`` failures in a row, then
SIGTERM and SIGKILL after the grace period) restarts it, and the standby takes over.

The fault comes from a plugin distribution installed for the test (a module and its
``.dist-info`` on ``PYTHONPATH``, loaded through the real entry points by both replicas):

- ``raise``: its Filter raises what no ``except Exception`` catches, once, for one pod: the
  scheduling thread ends;
- ``hang``: its Reserve refuses that pod once and its Unreserve (which has no time limit) then
  never returns: the loop stops turning and ``/healthz`` fails after the loop's limit (with
  ``--plugin-timeout 1``: 4 × 1 s + 30 s).

The leader goes on renewing its Lease either way until the restart: on SIGTERM it must stop at
once, without waiting for the broken loop, and release the Lease, so the standby leads within
the Lease's duration and a probe period of the restart. Each replica talks
to the apiserver through a fault proxy of its own, so every Binding is counted per replica and
per pod."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest
import yaml
from faultproxy import FaultProxy
from kubesched_process import KubeschedProcess, seed_config
from reliability_support import PODS, check_exactly_once, wait_for
from test_controlplane_faults import BackgroundCreator
from test_leader_failover import LEASE, _leader

#: The Lease's duration (LEASE), in seconds.
LEASE_SECONDS = 3.0
#: The prober's livenessProbe: periodSeconds, timeoutSeconds, failureThreshold, and the pod's
#: terminationGracePeriodSeconds.
PERIOD = 1.0
PROBE_TIMEOUT = 1.0
FAILURE_THRESHOLD = 3
GRACE = 10.0
#: Time the loaded 2-core machine may add to a takeover (process scheduling, the apiserver).
SLACK = 1.5
POISON = "poison"

PLUGIN = '''
"""Breaks the scheduling loop once, for one pod, in the first replica that meets it."""

import os
import time

from kubesched import Status, hookimpl


class LoopFault(BaseException):
    """A failure no ``except Exception`` catches."""


class LoopBreaker:
    def __init__(self, args, handle):
        self.mode = args["mode"]
        self.pod = args["pod"]
        self.marker = args["marker"]
        self.hung = set()

    def _first_time(self, pod):
        if pod.name != self.pod:
            return False
        try:  # one replica only, once: the standby that takes over schedules the pod
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    @hookimpl
    def filter(self, state, pod, node_info):
        if self.mode == "raise" and self._first_time(pod):
            raise LoopFault(f"the scheduling loop breaks on {pod.name}")
        return None

    @hookimpl
    def reserve(self, state, pod, node_name):
        if self.mode == "hang" and self._first_time(pod):
            self.hung.add(pod.uid)
            return Status.error("refused once, so that Unreserve runs")
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        if pod.uid in self.hung:
            time.sleep(600)  # far past the loop's limit; the process is restarted before
'''


def _install_plugin(site: Path) -> None:
    site.mkdir()
    (site / "acme_loop_breaker.py").write_text(PLUGIN)
    info = site / "acme_loop_breaker-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: acme-loop-breaker\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[kubesched.plugins]\nLoopBreaker = acme_loop_breaker:LoopBreaker\n"
    )


def _config(path: Path, mode: str, marker: Path) -> Path:
    seed_config(path, leader_elect=True, lease=LEASE, backoff=(0.2, 1.0))
    config = yaml.safe_load(path.read_text())
    profile = config["profiles"][0]
    profile["plugins"]["filter"]["enabled"].append({"name": "LoopBreaker"})
    profile["plugins"]["reserve"] = {"enabled": [{"name": "LoopBreaker"}]}
    profile["pluginConfig"].append(
        {"name": "LoopBreaker", "args": {"mode": mode, "pod": POISON, "marker": str(marker)}}
    )
    path.write_text(yaml.safe_dump(config))
    return path


class LivenessProber:
    """The kubelet's liveness probe over several replicas: GET /healthz every ``PERIOD``
    (``PROBE_TIMEOUT`` each); after ``FAILURE_THRESHOLD`` failures in a row the replica is sent
    SIGTERM, then SIGKILL once ``GRACE`` has passed."""

    def __init__(self, procs: list[KubeschedProcess]) -> None:
        self.procs = procs
        self.first_failure: dict[int, float] = {}
        self.killed: dict[int, float] = {}
        self.reasons: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="liveness-prober", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        failures = dict.fromkeys(range(len(self.procs)), 0)
        while not self._stop.wait(PERIOD):
            for i, proc in enumerate(self.procs):
                if i in self.killed or proc.proc.poll() is not None:
                    continue
                status, body = proc.get("/healthz", timeout=PROBE_TIMEOUT)
                if status == 200:
                    failures[i] = 0
                    continue
                failures[i] += 1
                self.first_failure.setdefault(i, time.monotonic())
                self.reasons.setdefault(i, body.strip())
                if failures[i] >= FAILURE_THRESHOLD:
                    self.killed[i] = time.monotonic()
                    threading.Thread(target=self._restart, args=(proc,), daemon=True).start()

    @staticmethod
    def _restart(proc: KubeschedProcess) -> None:
        proc.proc.send_signal(signal.SIGTERM)
        try:
            proc.proc.wait(GRACE)
        except Exception:
            proc.proc.kill()
            proc.proc.wait(10)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.mark.parametrize("mode", ["raise", "hang"])
def test_standby_takes_over_from_a_leader_whose_loop_broke(
    scenario, sa_kubeconfig, figure, mode, monkeypatch
):
    scenario.add_nodes(3)
    site = scenario.tmp_path / "site"
    _install_plugin(site)
    monkeypatch.setenv("PYTHONPATH", str(site))
    marker = scenario.tmp_path / "broken-once"
    proxies = [FaultProxy(sa_kubeconfig).start() for _ in range(2)]
    prober = None
    try:
        procs = [
            scenario.start_kubesched(
                p.kubeconfig(scenario.tmp_path / f"proxy-{i}.kubeconfig"),
                config_path=_config(scenario.tmp_path / f"config-{i}.yaml", mode, marker),
                args=["--plugin-timeout", "1"],
            )
            for i, p in enumerate(proxies)
        ]
        for proc in procs:
            proc.wait_ready()
        leader = wait_for(lambda: _leader(procs), 20, what="a leader")
        index = procs.index(leader)
        prober = LivenessProber(procs)
        names = [f"p{i}" for i in range(PODS)]
        creator = BackgroundCreator(scenario, names, warm=PODS // 3)
        assert creator.started.wait(60)
        scenario.create_pods([POISON])
        broke = time.monotonic()
        successor = wait_for(
            lambda: _leader(procs, skip=[leader]), 90, interval=0.1, what="the standby to lead"
        )
        took_over = time.monotonic()
        creator.join(120)
        every = [*names, POISON]
        scenario.wait_bound(every, 90)
        assert prober.killed.keys() == {index}, (prober.killed, prober.reasons)
        assert successor.proc.poll() is None
        failed, killed = prober.first_failure[index], prober.killed[index]
        expected = "has exited" if mode == "raise" else "has not started a cycle"
        assert expected in prober.reasons[index], prober.reasons[index]
        # kubelet's part: FAILURE_THRESHOLD probes, then SIGTERM. Ours: the leader exits by
        # itself well within the grace period, releasing the Lease (a SIGKILL would leave it to
        # run out), and the standby's next try takes it.
        assert killed - failed <= FAILURE_THRESHOLD * PERIOD + SLACK
        assert leader.proc.returncode == 0, leader.log.read_text()[-3000:]
        assert took_over - killed <= LEASE_SECONDS + PERIOD + SLACK, (
            f"took over {took_over - killed:.1f}s after SIGTERM"
        )
        figure.scenario = f"loop {'raises' if mode == 'raise' else 'hangs'}, standby takes over"
        figure.injected = (
            "a plugin's Filter raises a BaseException on one pod (the scheduling thread ends)"
            if mode == "raise"
            else "a plugin's Unreserve never returns (the loop stops turning; limit 34 s)"
        ) + "; the leader still renews its Lease"
        figure.checked = (
            "/healthz 500; prober (period 1 s, threshold 3) sends SIGTERM; the leader exits by "
            "itself (code 0) and releases the Lease; standby leads; every pod bound exactly once"
        )
        figure.notes["unhealthy_after_s"] = round(failed - broke, 2)
        figure.notes["restart_after_s"] = round(killed - failed, 2)
        figure.notes["takeover_after_restart_s"] = round(took_over - killed, 2)
        figure.notes["leader_exit_code"] = leader.proc.returncode
        check_exactly_once(scenario, proxies, every, figure, fault_ended=killed)
    finally:
        if prober is not None:
            prober.stop()
        scenario.cleanup()
        for p in proxies:
            p.stop()
