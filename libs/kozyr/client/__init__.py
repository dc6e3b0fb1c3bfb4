"""The Python client SDK of kozyr's gRPC APIs (bots, the CLI and the tests use it)."""

from kozyr.client.bots import BotsClient
from kozyr.client.clock import ClockClient
from kozyr.client.matchmaking import MatchmakingClient
from kozyr.client.table import TableClient

__all__ = ["BotsClient", "ClockClient", "MatchmakingClient", "TableClient"]
