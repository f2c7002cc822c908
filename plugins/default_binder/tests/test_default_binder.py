"""DefaultBinder binds through the backend and turns refusals into statuses."""

from __future__ import annotations

import pytest
from kubesched_default_binder import NAME, DefaultBinder

from kubesched import BindError, Code, ConfigError, CycleState, InMemoryBackend
from kubesched.framework.handle import Handle
from kubesched.framework.snapshot import Snapshot
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import make_scheduler, run_until_idle


def test_binds_through_the_backend():
    pod = make_pod("p").obj()
    backend = InMemoryBackend([make_node("n1").obj()], [pod])
    plugin = DefaultBinder({}, Handle("test", backend, Snapshot))
    assert plugin.bind(CycleState(), pod, "n1") is None
    assert backend.pod("default", "p").node_name == "n1"


@pytest.mark.parametrize(
    ("setup", "message", "retryable"),
    [
        ("pod-gone", 'pods "p" not found', False),
        ("already-bound", 'pod default/p is already assigned to node "n1"', False),
        ("node-gone", 'node "n9" not found', True),
    ],
    ids=["pod-gone", "already-bound", "node-gone"],
)
def test_refused_binding_is_an_error_status_carrying_the_reason(setup, message, retryable):
    pod = make_pod("p").obj()
    backend = InMemoryBackend([make_node("n1").obj()], [] if setup == "pod-gone" else [pod])
    plugin = DefaultBinder({}, Handle("test", backend, Snapshot))
    if setup == "already-bound":
        plugin.bind(CycleState(), pod, "n1")
    status = plugin.bind(CycleState(), pod, "n9" if setup == "node-gone" else "n1")
    assert status.code is Code.ERROR
    assert status.message() == message
    assert isinstance(status.err, BindError)
    assert status.err.retryable is retryable


def test_in_a_profile_it_binds_and_records_the_scheduled_event():
    profile = {"plugins": {"bind": {"enabled": [{"name": NAME}]}}}
    scheduler, backend = make_scheduler(
        {NAME: DefaultBinder}, profile, [make_node("n1").obj()], [make_pod("p").obj()]
    )
    run_until_idle(scheduler)
    assert backend.pod("default", "p").node_name == "n1"
    assert [(e.type, e.reason, e.message) for e in backend.events] == [
        ("Normal", "Scheduled", "Successfully assigned default/p to n1")
    ]


def test_takes_no_args():
    profile = {
        "plugins": {"bind": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"retries": 3}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: DefaultBinder}, profile)
    assert [str(e) for e in caught.value.errors] == [
        "profiles[0].pluginConfig[0].args.retries: unknown field; DefaultBinder takes no args"
    ]
