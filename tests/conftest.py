"""Shared test configuration.

Hypothesis runs derandomized (a fixed seed per test), so `make test` is reproducible on
every machine and in CI; pass ``--hypothesis-seed=random`` locally to explore further.
"""

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

settings.register_profile(
    "mbcourse",
    derandomize=True,
    deadline=None,
    max_examples=200,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("mbcourse")
