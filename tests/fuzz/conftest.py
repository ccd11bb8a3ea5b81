"""The fuzz tier (issue 14): Hypothesis property tests of every input boundary. Marked `fuzz`,
part of the default run, and bounded: a fixed number of examples per property, derandomized
(the same examples every run, so a failure reproduces), no example database written."""

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("bp", derandomize=True, database=None, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                 HealthCheck.data_too_large])
settings.load_profile("bp")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/fuzz/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.fuzz)
