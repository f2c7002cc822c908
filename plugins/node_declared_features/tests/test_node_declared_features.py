"""NodeDeclaredFeatures: kube-scheduler's table cases (nodedeclaredfeatures_test.go), the feature
inference of component-helpers' registry, and a pod through the scheduler."""

from __future__ import annotations

from typing import Any

import pytest
from kubesched_node_declared_features import (
    DEFAULT_FEATURES,
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    NAME,
    Feature,
    NodeDeclaredFeatures,
    infer_for_pod_scheduling,
)

from kubesched import (
    ActionType,
    Code,
    ConfigError,
    CycleState,
    EventResource,
    InMemoryBackend,
    NodeInfo,
    QueueingHint,
    Snapshot,
)
from kubesched.engine.event_handlers import node_update_actions
from kubesched.framework.handle import Handle
from kubesched.testing.builders import make_node, make_pod
from kubesched.testing.harness import Harness, make_scheduler

_STATE_KEY = f"PreFilter{NAME}"


def new_plugin(features=DEFAULT_FEATURES, version=(1, 35, 0)) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(
        {}, Handle("test", InMemoryBackend(), Snapshot), features=features, version=version
    )


def mock(name: str, infer: bool, max_version: tuple[int, int, int] | None = None) -> Feature:
    """kube's ``createMockFeature``: a feature every pod needs (or none does)."""
    return Feature(name, lambda spec: infer, max_version)


def node_with(*features: str, name: str = "node-1"):
    builder = make_node(name)
    if features:
        builder._status["declaredFeatures"] = list(features)
    return builder.obj()


# --- TestPreFilter ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("features", "version", "want_skip", "want_state"),
    [
        pytest.param(
            [mock("TestFeature1", True), mock("TestFeature2", False)],
            (1, 35, 0),
            False,
            {"TestFeature1"},
            id="Pod with feature requirements",
        ),
        pytest.param(
            [mock("TestFeature1", True, (1, 38, 0)), mock("TestFeature2", True, (1, 38, 0))],
            (1, 35, 0),
            False,
            {"TestFeature1", "TestFeature2"},
            id="Pod with multiple feature requirements",
        ),
        pytest.param(
            [mock("TestFeature1", False), mock("TestFeature2", False)],
            (1, 35, 0),
            True,
            None,
            id="Pod with no requirements",
        ),
        pytest.param(
            [mock("TestFeature1", True, (1, 33, 0)), mock("TestFeature2", False)],
            (1, 34, 0),
            True,
            None,
            id="Feature not required, version > MaxVersion",
        ),
        pytest.param(
            [mock("TestFeature1", True, (1, 34, 0))],
            (1, 34, 0),
            False,
            {"TestFeature1"},
            id="Feature still required at its MaxVersion",
        ),
    ],
)
def test_pre_filter(features, version, want_skip, want_state):
    state = CycleState()
    status = new_plugin(features, version).pre_filter(state, make_pod("test-pod").obj())
    if want_skip:
        assert status.code is Code.SKIP
        assert state.get(_STATE_KEY) is None
    else:
        assert status is None
        assert state.read(_STATE_KEY) == want_state


# --- TestFilter ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "required", "want_reason"),
    [
        pytest.param(
            node_with("FeatureA", "FeatureB"), {"FeatureA"}, None, id="Node matches requirements"
        ),
        pytest.param(
            node_with("FeatureB"),
            {"FeatureA"},
            ERR_REASON_UNSATISFIED_REQUIREMENTS,
            id="Node does not match requirements",
        ),
        pytest.param(
            node_with("FeatureA", "FeatureB", "FeatureC", name="node-multi"),
            {"FeatureA", "FeatureC"},
            None,
            id="Node with multiple features, pod requires subset",
        ),
        pytest.param(
            node_with(),
            {"FeatureA"},
            ERR_REASON_UNSATISFIED_REQUIREMENTS,
            id="Node has no declared features",
        ),
        pytest.param(
            node_with("FeatureA"),
            {"FeatureA", "FeatureB"},
            ERR_REASON_UNSATISFIED_REQUIREMENTS,
            id="Node with some but not all required features",
        ),
    ],
)
def test_filter(node, required, want_reason):
    state = CycleState()
    state.write(_STATE_KEY, frozenset(required))
    status = new_plugin().filter(state, make_pod("test-pod").obj(), NodeInfo(node))
    if want_reason is None:
        assert status is None
    else:
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == (want_reason,)


def test_filter_without_pre_filter_state_is_an_error():
    """kube's "Error getting pre-filter state"."""
    status = new_plugin().filter(CycleState(), make_pod("test-pod").obj(), NodeInfo(node_with()))
    assert status.code is Code.ERROR
    assert status.message() == f'error reading "{_STATE_KEY}" from cycle-state: not found'


# --- the registry's inference (component-helpers' feature tests) ----------------------------


def _restart_rule(action: str) -> list[dict[str, Any]]:
    return [{"action": action, "exitCodes": {"operator": "In", "values": [42]}}]


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param({"containers": [{"name": "c"}]}, set(), id="plain pod needs nothing"),
        pytest.param(
            {"containers": [{"name": "c", "restartPolicyRules": _restart_rule("Restart")}]},
            set(),
            id="a Restart rule needs nothing",
        ),
        pytest.param(
            {
                "containers": [
                    {"name": "c", "restartPolicyRules": _restart_rule("RestartAllContainers")}
                ]
            },
            {"RestartAllContainersOnContainerExits"},
            id="container rule RestartAllContainers",
        ),
        pytest.param(
            {
                "containers": [{"name": "c"}],
                "initContainers": [
                    {"name": "i", "restartPolicyRules": _restart_rule("RestartAllContainers")}
                ],
            },
            {"RestartAllContainersOnContainerExits"},
            id="init container rule RestartAllContainers",
        ),
        pytest.param(
            {"containers": [{"name": "c"}], "hostNetwork": True, "hostUsers": False},
            {"UserNamespacesHostNetworkSupport"},
            id="host network in a user namespace",
        ),
        pytest.param(
            {"containers": [{"name": "c"}], "hostNetwork": True},
            set(),
            id="host network, hostUsers unset",
        ),
        pytest.param(
            {"containers": [{"name": "c"}], "hostNetwork": False, "hostUsers": False},
            set(),
            id="user namespace without host network",
        ),
        pytest.param(
            {
                "containers": [{"name": "c"}],
                "ephemeralContainers": [
                    {
                        "name": "e",
                        "volumeMounts": [
                            {"name": "v", "mountPath": "/v", "bindMountOptions": ["nosuid"]}
                        ],
                    }
                ],
            },
            {"VolumeBindMountOptions"},
            id="bind mount options in an ephemeral container",
        ),
        pytest.param(
            {"containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]},
            set(),
            id="volume mount without bind mount options",
        ),
    ],
)
def test_infer_for_pod_scheduling(spec, want):
    assert infer_for_pod_scheduling(spec, DEFAULT_FEATURES) == want


def test_default_registry_is_kubes_sorted_by_name():
    names = [feature.name for feature in DEFAULT_FEATURES]
    assert names == sorted(names)
    assert "RestartAllContainersOnContainerExits" in names and len(names) == 9


# --- TestEnqueueExtensionsNodeUpdate / TestIsSchedulableAfterTargetPodUpdate -----------------


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, node_with("FeatureA"), QueueingHint.QUEUE, id="Node Add with feature"),
        pytest.param(
            node_with(),
            node_with("FeatureA"),
            QueueingHint.QUEUE,
            id="Node Update (Features Added)",
        ),
        pytest.param(
            node_with("FeatureA"),
            node_with("FeatureA"),
            QueueingHint.SKIP,
            id="Node Update (Features Unchanged)",
        ),
        pytest.param(None, "not-a-node", QueueingHint.QUEUE, id="wrong object queues"),
    ],
)
def test_hint_node_change(old, new, want):
    assert new_plugin([])._hint_node_change(make_pod("test-pod").obj(), old, new) is want


@pytest.mark.parametrize(
    ("old_host_users", "new_host_users", "want"),
    [
        pytest.param(None, False, QueueingHint.QUEUE, id="Pod Update adds requirement"),
        pytest.param(False, None, QueueingHint.QUEUE, id="Pod Update removes requirement"),
        pytest.param(None, None, QueueingHint.SKIP, id="Pod Update with no change in requirements"),
    ],
)
def test_hint_target_pod_update(old_host_users, new_host_users, want):
    def pod(host_users):
        spec: dict[str, Any] = {"hostNetwork": True}
        if host_users is not None:
            spec["hostUsers"] = host_users
        return make_pod("test-pod").uid("123").spec(**spec).obj()

    plugin = new_plugin()
    assert plugin._hint_target_pod_update(pod(None), pod(old_host_users), pod(new_host_users)) is (
        want
    )


def test_hint_target_pod_update_ignores_other_pods():
    plugin = new_plugin()
    other_old = make_pod("other").uid("456").obj()
    other_new = make_pod("other").uid("456").spec(hostNetwork=True, hostUsers=False).obj()
    target = make_pod("test-pod").uid("123").obj()
    assert plugin._hint_target_pod_update(target, other_old, other_new) is QueueingHint.SKIP


def test_events_to_register():
    events = new_plugin().events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == [
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
        (EventResource.UNSCHEDULED_POD, ActionType.UPDATE),
    ]


def test_core_files_declared_features_changes_under_their_action():
    actions = node_update_actions(node_with(), node_with("FeatureA"))
    assert actions == ActionType.UPDATE_NODE_DECLARED_FEATURE
    assert not node_update_actions(node_with("FeatureA"), node_with("FeatureA"))


def test_sign_pod_is_the_required_features():
    plugin = new_plugin()
    assert plugin.sign_pod(make_pod("a").obj()) == []
    needs = make_pod("b").spec(hostNetwork=True, hostUsers=False).obj()
    assert plugin.sign_pod(needs) == ["UserNamespacesHostNetworkSupport"]


def test_args_are_refused():
    profile = {
        "plugins": {"multiPoint": {"enabled": [{"name": NAME}]}},
        "pluginConfig": [{"name": NAME, "args": {"strict": True}}],
    }
    with pytest.raises(ConfigError) as caught:
        make_scheduler({NAME: NodeDeclaredFeatures}, profile)
    assert [str(e) for e in caught.value.errors] == [
        f"profiles[0].pluginConfig[0].args.strict: unknown field; {NAME} takes no args"
    ]


# --- through the scheduler --------------------------------------------------------------------


def in_user_namespace(name: str):
    return make_pod(name).spec(hostNetwork=True, hostUsers=False)


def test_pod_lands_on_the_node_declaring_its_feature_and_waits_for_one():
    with Harness.for_plugin(
        NodeDeclaredFeatures,
        nodes=[node_with(name="old"), node_with("UserNamespacesHostNetworkSupport", name="new")],
    ) as harness:
        harness.add_pod(in_user_namespace("p"), make_pod("plain"))
        harness.run()
        assert harness.node_of("p") == "new"
        assert harness.node_of("plain") in {"old", "new"}

        harness.delete_node("new")
        report = harness.schedule(in_user_namespace("q"))
        assert harness.node_of("q") is None
        assert (
            report.message == f"0/1 nodes are available: 1 {ERR_REASON_UNSATISFIED_REQUIREMENTS}."
        )

        # The old node's kubelet is upgraded: it now declares the feature, and the pod moves back.
        harness.add_node(node_with("UserNamespacesHostNetworkSupport", name="old"))
        harness.run()
        assert harness.node_of("q") == "old"
