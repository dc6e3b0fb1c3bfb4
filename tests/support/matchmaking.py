"""Helpers shared by the matchmaking tests, in-process (integration) and as processes (e2e)."""

from __future__ import annotations

import asyncio

from kozyr.api.matchmaking.v1 import matchmaking_service_pb2 as pb
from kozyr.client import MatchmakingClient

FINAL = (pb.TICKET_STATE_MATCHED, pb.TICKET_STATE_CANCELLED, pb.TICKET_STATE_EXPIRED)


async def final_state(client: MatchmakingClient, ticket_id: str) -> pb.WatchTicketResponse:
    """The ticket's last state from WatchTicket (matched, cancelled or expired)."""
    last = None
    async with asyncio.timeout(30):
        async for view in client.watch_ticket(ticket_id):
            last = view
            if view.state in FINAL:
                break
    assert last is not None
    return last
