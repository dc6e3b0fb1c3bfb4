"""The roles a token names (`kozyr.runtime.auth`), in a module of their own.

The command line offers them as the choices of `kozyr token --role` before any token is
minted: the enum alone must not bring PyJWT and cryptography into `kozyr --help`.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """What a caller is. Players act for their own seat; services act for the platform."""

    PLAYER = "player"
    SERVICE = "service"
    ADMIN = "admin"
