"""Hypothesis settings for the fuzz tests: bounded examples and a deadline per example, so the
suite stays fast in CI; ``KUBESCHED_FUZZ_EXAMPLES=N`` runs N examples per test instead."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "kubesched",
    max_examples=int(os.environ.get("KUBESCHED_FUZZ_EXAMPLES", "150")),
    deadline=2000,  # ms per example: a slow input is a finding, not noise
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=os.environ.get("CI") == "true",  # CI runs are repeatable
    print_blob=True,
    database=None,  # nothing written into the checkout
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)
settings.load_profile("kubesched")
