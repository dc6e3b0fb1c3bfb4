"""How the command line fails: a clear sentence and an exit code, never a traceback.

Exit codes: 0 everything holds, 1 the checked facts do not hold (a verification
failed, a stream cannot be replayed), 2 the command could not be carried out as asked
(usage, configuration, an unknown table, an unreachable database).
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2


class CliError(Exception):
    """A user-facing failure: `message` is printed as is, then the process exits."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
