"""`kozyr republish`: publish the event log to JetStream again (a lost stream rebuilt).

Reads KOZYR_DATABASE_URL, KOZYR_NATS_URL (an admin's credentials when NATS has users,
docs/architecture.md "NATS rights") and KOZYR_SUBJECT_ROOT, like the services.
"""

from __future__ import annotations

import nats
from nats.errors import Error as NatsError

from kozyr.cli.problems import CliError
from kozyr.eventstore import PostgresEventStore, StoreUnavailable
from kozyr.runtime.settings import SettingsError, load_settings
from kozyr.table.adapters.republishing import Republished, republish


async def republish_log(after_global: int) -> Republished:
    """Republish everything after `after_global`; CliError when a server cannot be used."""
    try:
        settings = load_settings(required={"database_url", "nats_url"})
    except SettingsError as err:
        raise CliError(str(err)) from None
    assert settings.database_url is not None
    try:
        nc = await nats.connect(
            servers=settings.nats_servers, allow_reconnect=False, connect_timeout=5
        )
    except (OSError, NatsError, TimeoutError) as err:
        raise CliError(f"cannot reach NATS at KOZYR_NATS_URL: {err}") from None
    try:
        async with PostgresEventStore(settings.database_url) as store:
            return await republish(
                store,
                nc.jetstream(),
                settings.subject_root,
                after_global=after_global,
                replicas=settings.stream_replicas,
            )
    except StoreUnavailable as err:
        raise CliError(f"cannot read the event log at KOZYR_DATABASE_URL: {err}") from None
    except (NatsError, TimeoutError) as err:
        raise CliError(
            f"NATS refused a publication (are these an admin's rights?): {err}"
        ) from None
    finally:
        await nc.close()
