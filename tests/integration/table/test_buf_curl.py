"""A client that is not Python: `buf curl` (installed by `make install`) calls the real
table service as docs/api.md §9 shows — schema from server reflection v1, the token in
the authorization header — and a refusal's error details (ErrorInfo, one
LocalizedMessage per language) are decoded with the vendored protos/google/rpc by `buf
convert`, as a client in any language decodes them with its generated code."""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from asyncio.subprocess import PIPE
from pathlib import Path
from typing import Any

import pytest

from kozyr.runtime.auth import Role
from tests.integration.table.conftest import RunningTableService
from tests.support.tables import token

pytestmark = pytest.mark.integration

BUF = Path(sys.executable).parent / "buf"
REPO = Path(__file__).resolve().parents[3]
TABLE_SERVICE = "kozyr.table.v1.TableService"


async def buf_curl(
    target: str, method: str, body: dict[str, object], bearer: str
) -> tuple[int, str, str]:
    """`buf curl` of one TableService method, exactly as docs/api.md writes it (the
    schema from the server's reflection, v1)."""
    process = await asyncio.create_subprocess_exec(
        str(BUF),
        "curl",
        "--protocol",
        "grpc",
        "--http2-prior-knowledge",
        "--reflect-protocol",
        "grpc-v1",
        "-H",
        f"authorization: Bearer {bearer}",
        "-d",
        json.dumps(body),
        f"http://{target}/{TABLE_SERVICE}/{method}",
        stdout=PIPE,
        stderr=PIPE,
    )
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_buf_curl_creates_finds_and_is_refused_like_any_client(
    table_service: RunningTableService,
) -> None:
    assert BUF.exists(), "make install puts buf in .venv/bin"
    target = table_service.target
    code, out, err = await buf_curl(
        target,
        "CreateTable",
        {
            "requestId": "buf-1",
            "game": "GAME_THREE_FIVE_EIGHT",
            "seats": [{"playerId": "ana"}, {"computer": True}, {"computer": True}],
        },
        token("matchmaker", Role.SERVICE),
    )
    assert code == 0, err
    table_id = json.loads(out)["tableId"]

    code, out, err = await buf_curl(
        target, "ListTables", {"playerId": "ana"}, token("mod", Role.ADMIN)
    )
    assert code == 0, err
    [listed] = json.loads(out)["tables"]
    assert (listed["tableId"], listed["state"]) == (table_id, "TABLE_STATE_OPEN")
    assert listed["seatPlayerIds"] == ["ana", "", ""]

    code, out, err = await buf_curl(target, "ListTables", {}, token("ana"))
    assert code != 0
    refusal = json.loads(err)
    assert refusal["code"] == "permission_denied"
    decoded = [await buf_convert(d["type"], d["value"]) for d in refusal["details"]]
    assert decoded[0]["reason"] == "ROLE_NOT_ALLOWED"
    assert decoded[0]["metadata"] == {"role": "player", "allowedRoles": "admin"}
    assert [d["locale"] for d in decoded[1:]] == ["en", "ro", "it"]
    assert decoded[2]["message"].startswith("Rolul dvs. (player)")


async def buf_convert(message_type: str, value: str) -> dict[str, Any]:
    """A detail's bytes (base64, as buf curl prints them) as JSON, decoded by `buf
    convert` with the vendored protos/google/rpc: what any non-Python client does."""
    process = await asyncio.create_subprocess_exec(
        str(BUF),
        "convert",
        str(REPO / "protos"),
        "--type",
        message_type,
        "--from",
        "-#format=binpb",
        "--to",
        "-#format=json",
        stdin=PIPE,
        stdout=PIPE,
        stderr=PIPE,
    )
    raw = base64.b64decode(value + "=" * (-len(value) % 4))
    out, err = await process.communicate(raw)
    assert process.returncode == 0, err.decode()
    decoded: dict[str, Any] = json.loads(out)
    return decoded
