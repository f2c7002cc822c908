"""``leaderElection`` validation: kube's ``ValidateLeaderElectionConfiguration``
(k8s.io/component-base/config/validation) and the check client-go's ``NewLeaderElector`` makes
when kube-scheduler starts (renewDeadline above retryPeriod × JitterFactor 1.2), all reported at
once with their field paths, and none of them when leader election is off."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.errors import ConfigError
from kubesched.testing.harness import make_config


def errors_of(election: dict[str, Any]) -> list[str]:
    try:
        make_config({}, leaderElection=election)
    except ConfigError as exc:
        return [str(e) for e in exc.errors]
    return []


RENEW = "leaderElection.renewDeadline: must be greater than retryPeriod × 1.2"


@pytest.mark.parametrize(
    ("election", "expected"),
    [
        pytest.param({}, [], id="defaults-15s-10s-2s"),
        pytest.param(
            {"leaseDuration": "3s", "renewDeadline": "2s", "retryPeriod": "500ms"},
            [],
            id="fast-failover",
        ),
        pytest.param(
            {"leaseDuration": "5s"},
            ["leaderElection.leaseDuration: must be greater than renewDeadline (10s), got 5s"],
            id="lease-below-renew",
        ),
        pytest.param(
            {"leaseDuration": "10s", "renewDeadline": "10s"},
            ["leaderElection.leaseDuration: must be greater than renewDeadline (10s), got 10s"],
            id="lease-equal-to-renew",
        ),
        pytest.param(
            {"retryPeriod": "9s"},
            [
                f"{RENEW} (10.8s; the leader must have time for more than one jittered retry), "
                "got 10s"
            ],
            id="renew-within-jittered-retry",
        ),
        pytest.param(
            {"renewDeadline": "2.4s", "retryPeriod": "2s"},
            [
                f"{RENEW} (2.4s; the leader must have time for more than one jittered retry), "
                "got 2.4s"
            ],
            id="renew-equal-to-jittered-retry",
        ),
        pytest.param(
            {"renewDeadline": "2400000001ns", "retryPeriod": "2s"}, [], id="renew-just-above"
        ),
        pytest.param(
            {"leaseDuration": "-1s", "renewDeadline": "-2s", "retryPeriod": "-3s"},
            [
                "leaderElection.leaseDuration: must be greater than zero, got -1s",
                "leaderElection.renewDeadline: must be greater than zero, got -2s",
                "leaderElection.retryPeriod: must be greater than zero, got -3s",
            ],
            id="negative-durations-each-named",
        ),
        pytest.param(
            {"leaseDuration": "4s", "renewDeadline": "5s", "retryPeriod": "5s"},
            [
                "leaderElection.leaseDuration: must be greater than renewDeadline (5s), got 4s",
                f"{RENEW} (6s; the leader must have time for more than one jittered retry), got 5s",
            ],
            id="every-error-at-once",
        ),
        pytest.param(
            {"resourceLock": "configmapsleases"},
            ['leaderElection.resourceLock: must be "leases", got "configmapsleases"'],
            id="resource-lock",
        ),
        pytest.param(
            {
                "leaderElect": False,
                "leaseDuration": "1s",
                "renewDeadline": "5s",
                "retryPeriod": "9s",
            },
            [],
            id="unchecked-without-leader-election",
        ),
    ],
)
def test_leader_election_rules(election: dict[str, Any], expected: list[str]) -> None:
    assert errors_of(election) == expected
