"""``kubesched run`` keeps no record per pod it ever scheduled: under churn (waves of pods
scheduled and deleted) its scheduler's memory stays flat and ``attempts`` stays empty, while
``simulate`` (and ``explain``, built on it) still report every pod's latest attempt."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from test_loop_liveness import KUBECONFIG

from kubesched.backends.memory import InMemoryBackend
from kubesched.engine.scheduler import Scheduler
from kubesched.service.run import RunOptions, Service
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_config

WAVES = 6
PODS = 300


def _churn(scheduler: Scheduler, backend: InMemoryBackend) -> list[int]:
    """Schedule and delete WAVES waves of PODS pods; traced memory after each wave."""
    after: list[int] = []
    for wave in range(WAVES):
        pods = [make_pod(f"w{wave}-p{i}").uid(f"w{wave}-{i}").obj() for i in range(PODS)]
        for pod in pods:
            backend.add_pod(pod)
        while scheduler.schedule_one(timeout=0):
            pass
        assert all(backend.pods[p.uid].node_name for p in pods)
        for pod in pods:
            backend.delete_pod(backend.pods[pod.uid])
        backend.events.clear()  # the in-memory cluster's own log, not the scheduler's
        gc.collect()
        after.append(tracemalloc.get_traced_memory()[0])
    return after


def _scheduler(record_attempts: bool) -> tuple[Scheduler, InMemoryBackend]:
    config, registry = make_config({})
    nodes = [make_node(f"n{i}").capacity(cpu="1000", memory="1000Gi", pods="10000").obj()
             for i in range(3)]  # fmt: skip
    backend = InMemoryBackend(nodes, [])
    scheduler = Scheduler(
        config, backend, registry, inline_binding=True, record_attempts=record_attempts
    )
    scheduler.start()
    return scheduler, backend


def test_attempts_stay_bounded_and_memory_flat_under_churn() -> None:
    scheduler, backend = _scheduler(record_attempts=False)
    tracemalloc.start()
    try:
        after = _churn(scheduler, backend)
    finally:
        tracemalloc.stop()
        scheduler.stop()
    assert len(scheduler.attempts) == 0
    growth = after[-1] - after[1]  # the first wave warms caches up
    assert growth < 256 * 1024, f"grew {growth} bytes over {WAVES - 2} waves: {after}"


def test_a_recording_scheduler_keeps_every_pod() -> None:
    scheduler, backend = _scheduler(record_attempts=True)
    tracemalloc.start()
    try:
        _churn(scheduler, backend)
    finally:
        tracemalloc.stop()
        scheduler.stop()
    assert len(scheduler.attempts) == WAVES * PODS


def test_run_does_not_record_attempts(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    service = Service(RunOptions(config=None, kubeconfig=str(kubeconfig), leader_elect=False))
    assert service.scheduler.record_attempts is False
