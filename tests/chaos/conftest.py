"""The chaos suite (`make chaos`): fault scenarios against real service processes.

Not part of `make test` (tests/conftest.py leaves this directory out): each scenario
runs its own PostgreSQL, NATS and service processes and takes up to a minute.
"""

from __future__ import annotations

import pytest

from tests.chaos.template import Template, build_template

pytest.register_assert_rewrite("tests.chaos.invariants")


@pytest.fixture(scope="session")
async def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """Tables near their end, built once per session (outside the scenarios' 60 s)."""
    return await build_template(tmp_path_factory.mktemp("template"))
