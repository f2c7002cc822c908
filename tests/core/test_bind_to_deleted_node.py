"""A node deleted between the decision and the Binding is not bound to.

The apiserver does not check a Binding's node, so a pod bound to a node that is already gone
stays Pending on it until the pod GC controller deletes it. Binding cycles can queue behind
each other (``parallelism`` bounds how many run at once), so the window is not one request
long: the binding cycle checks the node is still in the cache just before Bind and, when it is
gone, sends the pod back to the queue, which places it on a node that exists."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import CycleState, Handle, Pod, Status, hookimpl
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


class DeleteTheNode:
    """A PreBind plugin that deletes the chosen node the first time it runs, as another client
    would while the binding cycle is under way."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.deleted: list[str] = []

    @hookimpl
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        if not self.deleted:
            self.handle.backend.delete_node(node_name)
            self.deleted.append(node_name)
        return None


class RecordingBinder:
    """A Bind plugin that records each Bind it is asked for, then binds through the backend."""

    def __init__(self, args: Mapping[str, Any], handle: Handle) -> None:
        self.handle = handle
        self.asked: list[tuple[str, str]] = []

    @hookimpl
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        self.asked.append((pod.name, node_name))
        self.handle.backend.bind(pod, node_name)
        return Status.success()


def test_a_pod_whose_node_was_deleted_before_its_bind_is_placed_again_elsewhere():
    now = [0.0]
    profile = {
        "plugins": {
            "preBind": {"enabled": [{"name": "DeleteTheNode"}]},
            "bind": {"enabled": [{"name": "RecordingBinder"}], "disabled": [{"name": "*"}]},
        }
    }
    scheduler, backend = make_scheduler(
        {"DeleteTheNode": DeleteTheNode, "RecordingBinder": RecordingBinder},
        profile,
        [make_node(n).obj() for n in ("n1", "n2")],
        [make_pod("p").obj()],
        clock=lambda: now[0],
    )
    plugins = scheduler.frameworks["custom-scheduler"].plugins
    run_until_idle(scheduler)
    [gone] = plugins["DeleteTheNode"].deleted
    assert plugins["RecordingBinder"].asked == []  # not bound to the deleted node
    assert backend.pod("default", "p").node_name == ""
    now[0] += 10  # past the pod's backoff
    scheduler.queue.flush()
    run_until_idle(scheduler)
    [(pod, node)] = plugins["RecordingBinder"].asked
    assert pod == "p"
    assert node != gone
    assert backend.pod("default", "p").node_name == node
