"""`kozyr.runtime` loads its names on first use (light commands import one enum of it):
every name it exports is there, and is the very object of the module it comes from."""

from __future__ import annotations

import importlib

import pytest

import kozyr.runtime as runtime


def test_every_export_has_a_home() -> None:
    assert set(runtime.__all__) == set(runtime._HOMES)


@pytest.mark.parametrize("name", runtime.__all__)
def test_each_name_is_its_modules_own(name: str) -> None:
    home = importlib.import_module(runtime._HOMES[name])
    assert getattr(runtime, name) is getattr(home, name)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = runtime.Nothing
