"""SchedulerMetrics: kube-scheduler's names, labels and buckets, in a format Prometheus parses."""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from kubesched import hookimpl
from kubesched.engine.metrics import (
    CONTENT_TYPE,
    PLUGIN_BUFFER_SIZE,
    PLUGIN_METRICS_SAMPLE_PERCENT,
    STATUS_LABELS,
    SchedulerMetrics,
    exponential_buckets,
    status_label,
)
from kubesched.framework.status import Code, Status

# -- a small parser for the text exposition format 0.0.4 ---------------------------------------
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _unescape(text: str) -> str:
    return re.sub(r'\\[\\"n]', lambda m: _UNESCAPE[m.group(0)], text)


def _value(text: str) -> float:
    return {"+Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}.get(text) or float(text)


@dataclass
class Family:
    name: str
    type: str = ""
    help: str = ""
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)


def parse(text: str) -> dict[str, Family]:
    """Families by name; fails on anything a Prometheus text parser would refuse."""
    families: dict[str, Family] = {}
    current: Family | None = None
    assert text.endswith("\n"), "the exposition must end with a newline"
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            assert name not in families, f"{name} declared twice"
            current = families[name] = Family(name, help=_unescape(help_text))
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            assert current is not None and current.name == name, f"TYPE {name} without HELP"
            assert kind in ("counter", "gauge", "histogram", "summary", "untyped"), kind
            current.type = kind
        else:
            match = _SAMPLE.match(line)
            assert match, f"not a sample line: {line!r}"
            name, body, value = match.groups()
            assert current is not None and current.type, f"{name} before its TYPE"
            suffixes = ("_bucket", "_sum", "_count") if current.type == "histogram" else ("",)
            assert name in {current.name + s for s in suffixes}, f"{name} under {current.name}"
            labels: dict[str, str] = {}
            rest = body or ""
            while rest:
                label = _LABEL.match(rest)
                assert label, f"bad labels in {line!r}"
                labels[label.group(1)] = _unescape(label.group(2))
                rest = rest[label.end() :]
            current.samples.append((name, labels, _value(value)))
    for family in families.values():
        if family.type == "histogram":
            _check_histogram(family)
    return families


def _check_histogram(family: Family) -> None:
    series: dict[tuple[tuple[str, str], ...], list[tuple[float, float]]] = {}
    counts: dict[tuple[tuple[str, str], ...], float] = {}
    for name, labels, value in family.samples:
        key = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
        if name.endswith("_bucket"):
            series.setdefault(key, []).append((_value(labels["le"]), value))
        elif name.endswith("_count"):
            counts[key] = value
    for key, buckets in series.items():
        bounds = [b for b, _ in buckets]
        assert bounds == sorted(bounds) and bounds[-1] == math.inf, f"{family.name}: {bounds}"
        cumulative = [c for _, c in buckets]
        assert cumulative == sorted(cumulative), f"{family.name}: buckets must be cumulative"
        assert cumulative[-1] == counts[key], f"{family.name}: +Inf bucket != _count"


def render(metrics: SchedulerMetrics) -> dict[str, Family]:
    return parse(metrics.render().decode())


def sample(families: dict[str, Family], metric: str, /, **labels: str) -> float:
    family_name = re.sub(r"_(bucket|sum|count)$", "", metric)
    family = families.get(family_name) or families[metric]
    found = [v for n, ls, v in family.samples if n == metric and ls == labels]
    assert len(found) == 1, f"{metric}{labels}: {len(found)} samples in {family.samples}"
    return found[0]


def bounds(families: dict[str, Family], name: str) -> list[float]:
    return [ls["le"] for n, ls, _ in families[name].samples if n == f"{name}_bucket"][:-1]


# -- tests -------------------------------------------------------------------------------------
def test_nothing_recorded_renders_no_sample():
    families = render(SchedulerMetrics())
    assert {name: f.samples for name, f in families.items() if f.samples} == {}
    assert "scheduler_schedule_attempts_total" in families
    assert not [name for name in families if name.endswith("_created")]
    assert CONTENT_TYPE == "text/plain; version=0.0.4; charset=utf-8"


def test_each_scheduler_has_its_own_registry():
    one, other = SchedulerMetrics(), SchedulerMetrics()
    one.attempt("scheduled", "p", 0.01)
    assert not render(other)["scheduler_schedule_attempts_total"].samples


RECORDERS: list[tuple[str, Callable[[SchedulerMetrics], None], str, str, str]] = [
    (
        "attempt",
        lambda m: m.attempt("scheduled", "p", 0.01),
        "scheduler_scheduling_attempt_duration_seconds",
        "histogram",
        "[STABLE] ",
    ),
    (
        "attempt-counter",
        lambda m: m.attempt("scheduled", "p", 0.01),
        "scheduler_schedule_attempts_total",
        "counter",
        "[STABLE] ",
    ),
    (
        "extension-point",
        lambda m: m.extension_point("Filter", "Success", "p", 0.01),
        "scheduler_framework_extension_point_duration_seconds",
        "histogram",
        "[STABLE] ",
    ),
    (
        "plugin",
        lambda m: m.plugin("NodeName", "Filter", "Success", 0.01),
        "scheduler_plugin_execution_duration_seconds",
        "histogram",
        "[ALPHA] ",
    ),
    (
        "pending",
        lambda m: m.set_pending({"active": 1}),
        "scheduler_pending_pods",
        "gauge",
        "[STABLE] ",
    ),
    (
        "binding",
        lambda m: m.binding("success", 0.01),
        "scheduler_binding_duration_seconds",
        "histogram",
        "[ALPHA] ",
    ),
    ("leader", lambda m: m.set_leader(True), "leader_election_master_status", "gauge", "[ALPHA] "),
]


@pytest.mark.parametrize(
    ("record", "name", "kind", "stability"), [pytest.param(*r[1:], id=r[0]) for r in RECORDERS]
)
def test_each_metric_has_kubes_name_type_and_stability(record, name, kind, stability):
    metrics = SchedulerMetrics()
    record(metrics)
    family = render(metrics)[name]
    assert family.type == kind
    assert family.help.startswith(stability)


@pytest.mark.parametrize(
    ("record", "name", "expected"),
    [
        pytest.param(
            lambda m: m.attempt("scheduled", "p", 0.01),
            "scheduler_scheduling_attempt_duration_seconds",
            [
                "0.001",
                "0.002",
                "0.004",
                "0.008",
                "0.016",
                "0.032",
                "0.064",
                "0.128",
                "0.256",
                "0.512",
                "1.024",
                "2.048",
                "4.096",
                "8.192",
                "16.384",
            ],
            id="attempt-ExponentialBuckets(0.001,2,15)",
        ),
        pytest.param(
            lambda m: m.extension_point("Filter", "Success", "p", 0.01),
            "scheduler_framework_extension_point_duration_seconds",
            [
                "0.0001",
                "0.0002",
                "0.0004",
                "0.0008",
                "0.0016",
                "0.0032",
                "0.0064",
                "0.0128",
                "0.0256",
                "0.0512",
                "0.1024",
                "0.2048",
            ],
            id="extension-point-ExponentialBuckets(0.0001,2,12)",
        ),
        pytest.param(
            lambda m: m.plugin("NodeName", "Filter", "Success", 0.01),
            "scheduler_plugin_execution_duration_seconds",
            [repr(0.00001 * 1.5**i) for i in range(20)],
            id="plugin-ExponentialBuckets(0.00001,1.5,20)",
        ),
        pytest.param(
            lambda m: m.binding("success", 0.01),
            "scheduler_binding_duration_seconds",
            [repr(0.001 * 2**i) for i in range(15)],
            id="binding-ExponentialBuckets(0.001,2,15)",
        ),
    ],
)
def test_histograms_use_kubes_buckets(record, name, expected):
    metrics = SchedulerMetrics()
    record(metrics)
    got = bounds(render(metrics), name)
    assert len(got) == len(expected)
    assert [float(b) for b in got] == pytest.approx([float(e) for e in expected], rel=1e-12)


def test_exponential_buckets_match_prometheus():
    assert exponential_buckets(1, 2, 5) == (1, 2, 4, 8, 16)
    plugin = exponential_buckets(0.00001, 1.5, 20)
    assert plugin[0] == 0.00001 and plugin[-1] == pytest.approx(0.0221683, rel=1e-5)
    for bad in ((0, 2, 3), (1, 1, 3), (1, 2, 0)):
        with pytest.raises(ValueError, match="exponential_buckets"):
            exponential_buckets(*bad)


def test_attempts_accumulate_by_result_and_profile():
    metrics = SchedulerMetrics()
    for seconds in (0.0005, 0.003, 0.003):
        metrics.attempt("scheduled", "default-scheduler", seconds)
    metrics.attempt("unschedulable", "default-scheduler", 0.02)
    metrics.attempt("error", "other", 100.0)

    families = render(metrics)

    attempts = "scheduler_schedule_attempts_total"
    assert sample(families, attempts, result="scheduled", profile="default-scheduler") == 3
    assert sample(families, attempts, result="unschedulable", profile="default-scheduler") == 1
    assert sample(families, attempts, result="error", profile="other") == 1
    duration = "scheduler_scheduling_attempt_duration_seconds"
    scheduled = {"result": "scheduled", "profile": "default-scheduler"}
    assert sample(families, f"{duration}_count", **scheduled) == 3
    assert sample(families, f"{duration}_sum", **scheduled) == pytest.approx(0.0065)
    assert sample(families, f"{duration}_bucket", **scheduled, le="0.001") == 1
    assert sample(families, f"{duration}_bucket", **scheduled, le="0.002") == 1
    assert sample(families, f"{duration}_bucket", **scheduled, le="0.004") == 3
    error = {"result": "error", "profile": "other"}
    assert sample(families, f"{duration}_bucket", **error, le="16.384") == 0
    assert sample(families, f"{duration}_bucket", **error, le="+Inf") == 1


def test_bucket_bounds_are_inclusive():
    metrics = SchedulerMetrics()
    metrics.extension_point("Bind", "Success", "p", 0.0001)
    metrics.extension_point("Bind", "Success", "p", 0.0002)

    families = render(metrics)

    name = "scheduler_framework_extension_point_duration_seconds_bucket"
    labels = {"extension_point": "Bind", "status": "Success", "profile": "p"}
    assert sample(families, name, **labels, le="0.0001") == 1
    assert sample(families, name, **labels, le="0.0002") == 2


def test_plugin_and_extension_point_labels_are_kubes():
    metrics = SchedulerMetrics()
    metrics.plugin("NodeResourcesFit", "Filter", status_label(Code.UNSCHEDULABLE), 0.00002)
    metrics.extension_point("Filter", status_label(None), "default-scheduler", 0.0003)

    families = render(metrics)

    plugin = "scheduler_plugin_execution_duration_seconds_count"
    assert (
        sample(
            families,
            plugin,
            plugin="NodeResourcesFit",
            extension_point="Filter",
            status="Unschedulable",
        )
        == 1
    )
    point = "scheduler_framework_extension_point_duration_seconds_count"
    assert (
        sample(
            families, point, extension_point="Filter", status="Success", profile="default-scheduler"
        )
        == 1
    )


@pytest.mark.parametrize(
    ("code", "label"),
    [
        (Code.SUCCESS, "Success"),
        (Code.ERROR, "Error"),
        (Code.UNSCHEDULABLE, "Unschedulable"),
        (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "UnschedulableAndUnresolvable"),
        (Code.WAIT, "Wait"),
        (Code.SKIP, "Skip"),
        (Code.PENDING, "Pending"),
        (None, "Success"),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
def test_status_labels_are_kubes_code_names(code, label):
    assert status_label(code) == label
    assert set(STATUS_LABELS) == set(Code)
    if code is not None:  # the one spelling, shared with explain's verdicts
        assert code.kube_name == label


def test_gauges_are_set_not_added():
    metrics = SchedulerMetrics()
    metrics.set_pending({"active": 5, "backoff": 2, "unschedulable": 1, "gated": 0})
    metrics.set_pending({"active": 3})
    metrics.set_leader(True)
    metrics.set_leader(False)
    metrics.set_leader(True, name="other-lease")

    families = render(metrics)

    pending = "scheduler_pending_pods"
    assert [sample(families, pending, queue=q) for q in ("active", "backoff", "gated")] == [3, 2, 0]
    assert sample(families, "leader_election_master_status", name="kube-scheduler") == 0
    assert sample(families, "leader_election_master_status", name="other-lease") == 1


@pytest.mark.parametrize(
    "value",
    ['quote"d', "back\\slash", "new\nline", 'all\\"\n', "ünïcødé", "", "a,b=c}"],
    ids=["quote", "backslash", "newline", "all-three", "unicode", "empty", "syntax-chars"],
)
def test_label_values_are_escaped(value):
    metrics = SchedulerMetrics()
    metrics.attempt("scheduled", value, 0.001)

    families = render(metrics)

    assert (
        sample(families, "scheduler_schedule_attempts_total", result="scheduled", profile=value)
        == 1
    )


def test_recording_from_many_threads_loses_nothing():
    metrics = SchedulerMetrics()

    def work() -> None:
        for _ in range(2000):
            metrics.attempt("scheduled", "p", 0.001)
            metrics.extension_point("Score", "Success", "p", 0.00001)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for _ in range(20):
        render(metrics)  # rendering while recording is consistent too
    for t in threads:
        t.join()

    families = render(metrics)
    assert (
        sample(families, "scheduler_schedule_attempts_total", result="scheduled", profile="p")
        == 16000
    )
    assert (
        sample(
            families,
            "scheduler_framework_extension_point_duration_seconds_count",
            extension_point="Score",
            status="Success",
            profile="p",
        )
        == 16000
    )


def test_plugin_durations_are_buffered_then_dropped_past_kubes_buffer_size():
    """kube's MetricAsyncRecorder: observations wait for a flush, at most 1000 of them."""
    metrics = SchedulerMetrics()
    for _ in range(PLUGIN_BUFFER_SIZE + 500):
        metrics.plugin("P", "Filter", "Success", 0.00001)
    assert metrics.plugin_observations_dropped == 500
    metrics.flush()
    metrics.plugin("P", "Filter", "Success", 0.00001)  # room again after the flush
    families = render(metrics)  # a scrape flushes first
    labels = {"plugin": "P", "extension_point": "Filter", "status": "Success"}
    count = "scheduler_plugin_execution_duration_seconds_count"
    assert sample(families, count, **labels) == PLUGIN_BUFFER_SIZE + 1


def test_a_run_records_the_binding_points_and_the_binding_duration() -> None:
    """Reserve, Permit, PreBind, Bind and PostBind are timed as kube-scheduler times them, and
    every Bind goes to scheduler_binding_duration_seconds: the metrics the README names."""
    from kubesched.backends.memory import InMemoryBackend
    from kubesched.engine.scheduler import Scheduler
    from kubesched.testing.builders import make_node, make_pod
    from kubesched.testing.harness import make_config

    config, registry = make_config({})
    metrics = SchedulerMetrics()
    backend = InMemoryBackend([make_node("n1").obj()], [make_pod("p").obj()])
    scheduler = Scheduler(config, backend, registry, inline_binding=True, metrics=metrics)
    scheduler.start()
    assert scheduler.schedule_one(timeout=0)
    scheduler.stop()
    families = render(metrics)
    count = "scheduler_framework_extension_point_duration_seconds_count"
    for point in ("Reserve", "Permit", "PreBind", "Bind", "PostBind"):
        labels = {"extension_point": point, "status": "Success", "profile": "custom-scheduler"}
        assert sample(families, count, **labels) == 1, point
    assert sample(families, "scheduler_binding_duration_seconds_count", result="success") == 1


class Everywhere:
    """A plugin at every point of both cycles; its Filter rejects node n0, its Reserve the
    pods named ``reject-…``, and nothing fits a pod named ``nowhere``."""

    def __init__(self, args: object, handle: object) -> None:
        pass

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None

    @hookimpl
    def filter(self, state, pod, node_info):
        if node_info.name == "n0" or pod.name == "nowhere":
            return Status(Code.UNSCHEDULABLE, "not n0")
        return None

    @hookimpl
    def post_filter(self, state, pod, filtered_node_status):
        return None, Status(Code.UNSCHEDULABLE, "no preemption here")

    @hookimpl
    def score(self, state, pod, node_info):
        return 1

    @hookimpl
    def reserve(self, state, pod, node_name):
        return Status(Code.UNSCHEDULABLE, "refused") if pod.name.startswith("reject-") else None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        return None

    @hookimpl
    def permit(self, state, pod, node_name):
        return None

    @hookimpl
    def pre_bind(self, state, pod, node_name):
        return None


def test_scheduling_pods_records_every_point_and_a_sample_of_plugin_calls() -> None:
    """200 pods scheduled: each extension point once per pod; plugin calls for the cycles
    kube's 10% sample picked, and for no other."""
    import random

    from kubesched.backends.memory import InMemoryBackend
    from kubesched.engine.scheduler import Scheduler
    from kubesched.testing.builders import make_node, make_pod
    from kubesched.testing.harness import make_config

    pods = 200
    points = ("preFilter", "filter", "postFilter", "score", "reserve", "permit", "preBind")
    config, registry = make_config(
        {"Everywhere": Everywhere},
        {"plugins": {p: {"enabled": [{"name": "Everywhere"}]} for p in points}},
    )
    metrics = SchedulerMetrics()
    nodes = [make_node(f"n{i}").obj() for i in range(3)]
    backend = InMemoryBackend(nodes, [make_pod(f"p{i}").obj() for i in range(pods)])
    scheduler = Scheduler(config, backend, registry, inline_binding=True, metrics=metrics)
    scheduler._plugin_sampler = random.Random(7)
    draws = random.Random(7)
    sampled = sum(draws.random() * 100 < PLUGIN_METRICS_SAMPLE_PERCENT for _ in range(pods))
    scheduler.start()
    while scheduler.schedule_one(timeout=0):
        pass
    assert sum(1 for p in backend.pods.values() if p.node_name) == pods
    families = render(metrics)

    point = "scheduler_framework_extension_point_duration_seconds_count"
    profile = "custom-scheduler"
    for name in ("PreFilter", "Filter", "Score", "Reserve", "Permit", "PreBind", "Bind"):
        labels = {"extension_point": name, "status": "Success", "profile": profile}
        assert sample(families, point, **labels) == pods, name
    assert 5 <= sampled <= 40, sampled  # the fixed seed's draw: about 10% of 200
    plugin = "scheduler_plugin_execution_duration_seconds_count"
    expected = {
        ("Everywhere", "PreFilter", "Success"): sampled,
        ("Everywhere", "Filter", "Success"): 2 * sampled,
        ("Everywhere", "Filter", "Unschedulable"): sampled,
        ("Everywhere", "Score", "Success"): 2 * sampled,
        ("Everywhere", "Reserve", "Success"): sampled,
        ("Everywhere", "Permit", "Success"): sampled,
        ("Everywhere", "PreBind", "Success"): sampled,
        ("TestBinder", "Bind", "Success"): sampled,
    }
    recorded = {
        (ls["plugin"], ls["extension_point"], ls["status"]): v
        for n, ls, v in families["scheduler_plugin_execution_duration_seconds"].samples
        if n == plugin
    }
    assert recorded == expected

    # A pod no node fits runs PostFilter; one whose Reserve fails runs Unreserve.
    backend.add_pod(make_pod("nowhere").obj())
    backend.add_pod(make_pod("reject-me").obj())
    while scheduler.schedule_one(timeout=0):
        pass
    scheduler.stop()
    families = render(metrics)
    post = {"extension_point": "PostFilter", "status": "Unschedulable", "profile": profile}
    assert sample(families, point, **post) == 1
    unreserve = {"extension_point": "Unreserve", "status": "Success", "profile": profile}
    assert sample(families, point, **unreserve) == 1
    refused = {"extension_point": "Reserve", "status": "Unschedulable", "profile": profile}
    assert sample(families, point, **refused) == 1


def test_a_full_buffer_stops_timing_rather_than_dropping() -> None:
    """While kube's buffer is full a sampled cycle runs its plugins untimed: nothing is measured
    only to be dropped."""
    import random

    from kubesched.backends.memory import InMemoryBackend
    from kubesched.engine.scheduler import Scheduler
    from kubesched.testing.builders import make_node, make_pod
    from kubesched.testing.harness import make_config

    class Always(random.Random):
        def random(self) -> float:
            return 0.0  # every cycle sampled

    config, registry = make_config(
        {"Everywhere": Everywhere}, {"plugins": {"filter": {"enabled": [{"name": "Everywhere"}]}}}
    )
    metrics = SchedulerMetrics()
    backend = InMemoryBackend([make_node("n1").obj()], [make_pod("p").obj()])
    scheduler = Scheduler(config, backend, registry, inline_binding=True, metrics=metrics)
    scheduler._plugin_sampler = Always()
    for _ in range(PLUGIN_BUFFER_SIZE):
        metrics.plugin("Filler", "Filter", "Success", 0.00001)
    scheduler.start()
    assert scheduler.schedule_one(timeout=0)
    scheduler.stop()
    assert metrics.plugin_observations_dropped == 0
    plugins = {
        ls["plugin"]
        for n, ls, _ in render(metrics)["scheduler_plugin_execution_duration_seconds"].samples
    }
    assert plugins == {"Filler"}
