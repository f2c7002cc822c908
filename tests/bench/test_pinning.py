"""CPU placement of the benchmark's processes: the control plane and the harness on one half of
the CPUs, the contender alone on the other, every thread of a process moved."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from bench.pinning import Placement, pin, placement_for


@pytest.mark.parametrize(
    ("cpus", "control_plane", "contender"),
    [([0, 1], {0}, {1}), ([0, 1, 2, 3], {0, 1}, {2, 3}), ([2, 5, 7], {2, 5}, {7})],
    ids=["two", "four", "odd-set"],
)
def test_placement_splits_the_cpus(cpus, control_plane, contender) -> None:
    assert placement_for(cpus) == Placement(frozenset(control_plane), frozenset(contender))


def test_one_cpu_is_not_split() -> None:
    assert placement_for([3]) is None


def test_the_placement_is_described_for_the_report() -> None:
    placement = Placement(frozenset({0}), frozenset({1, 2}))
    assert placement.describe() == (
        "etcd, kube-apiserver and the harness on CPU 0, each contender alone on CPU 1,2"
    )


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to move between")
def test_pin_moves_every_thread_and_later_threads_follow() -> None:
    child_code = textwrap.dedent(
        """
        import os, sys, threading, time
        started = threading.Event()
        threading.Thread(target=lambda: (started.set(), time.sleep(60)), daemon=True).start()
        started.wait()
        print("ready", flush=True)
        sys.stdin.readline()  # pinned meanwhile: start one more thread, report every thread
        threading.Thread(target=lambda: time.sleep(60), daemon=True).start()
        time.sleep(0.1)
        tasks = os.listdir(f"/proc/{os.getpid()}/task")
        print(sorted({tuple(sorted(os.sched_getaffinity(int(t)))) for t in tasks}), flush=True)
        """
    )
    target = frozenset({sorted(os.sched_getaffinity(0))[-1]})
    child = subprocess.Popen(
        [sys.executable, "-c", child_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        pin(child.pid, target)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == str([tuple(sorted(target))])
    finally:
        child.kill()
        child.wait()


def test_pin_names_a_process_that_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    with pytest.raises(ProcessLookupError):
        pin(child.pid, frozenset({0}))
