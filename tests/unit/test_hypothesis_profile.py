"""Property tests take no timed assertion: hypothesis's per-example deadline is off for
the whole suite (tests/conftest.py), so a loaded machine cannot fail a correct example."""

from hypothesis import settings


def test_no_example_has_a_deadline() -> None:
    assert settings.default is not None
    assert settings.default.deadline is None
