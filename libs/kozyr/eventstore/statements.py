"""The SQL of `PostgresEventStore`, in one place so that it can be read (and reviewed) whole.

The append is ONE statement, hence one round trip and one implicit transaction: a chain
of data-modifying CTEs where every step feeds on the previous one, so that when the
version check matches no row nothing else is written either:

    head      bump the stream's version and head hash, only at the expected version
              (a new stream: insert it, nothing if it exists already)
    request   record (stream, request id): its primary key makes a concurrent duplicate
              fail with a unique violation, undoing the whole statement
    batch     the events, decoded from one jsonb parameter
    appended  insert them at the next positions (UNIQUE (stream, position) backstop)
    queued    the same events into the outbox, then the append's messages, in that
              order (nothing NOTIFYs: the store wakes the relay after the commit)

Under READ COMMITTED, a concurrent writer blocked on the streams row re-checks
`version = $expected` against the committed row and matches nothing.

Parameters of both append statements, by position:
    $1 stream  $2 expected version  $3 new version  $4 new head hash  $5 request id
    $6 request fingerprint  $7 recorded_at  $8 metadata (jsonb text)  $9 events (jsonb
    text: [{event_id, position, type, schema_version, data, hash (hex)}, …])
    $10 messages (jsonb text: [{seq, message_id, channel, type, payload (base64)}, …])
    $11 previous head hash (existing streams only)
"""

from __future__ import annotations

from typing import Final

_APPEND_TEMPLATE: Final = """
WITH head AS (
    {head}
), request AS (
    INSERT INTO stream_requests
        (stream, request_id, fingerprint, first_position, last_position, recorded_at)
    SELECT id, $5, $6, $2::bigint + 1, $3, $7 FROM head
    RETURNING stream
), batch AS (
    SELECT b.*
      FROM request,
           jsonb_to_recordset($9::jsonb) AS b(
               event_id uuid, position bigint, type text, schema_version integer,
               data jsonb, hash text)
), appended AS (
    INSERT INTO events
        (event_id, stream, position, type, schema_version, data, metadata, recorded_at, hash)
    SELECT event_id, $1, position, type, schema_version, data, $8::jsonb, $7,
           decode(hash, 'hex')
      FROM batch
     ORDER BY position
    RETURNING global_position, position
), queued AS (
    INSERT INTO outbox (stream, global_position, message_id, channel, type, payload)
    SELECT $1, q.global_position, q.message_id, q.channel, q.type, q.payload
      FROM (SELECT a.position AS seq, a.global_position, NULL::uuid AS message_id,
                   NULL::text AS channel, NULL::text AS type, NULL::bytea AS payload
              FROM appended a
            UNION ALL
            SELECT $3::bigint + m.seq, NULL, m.message_id, m.channel, m.type,
                   decode(m.payload, 'base64')
              FROM request,
                   jsonb_to_recordset($10::jsonb) AS m(
                       seq bigint, message_id uuid, channel text, type text, payload text)
           ) q
     ORDER BY q.seq
)
SELECT global_position FROM appended ORDER BY position
"""

APPEND_TO_EXISTING_STREAM: Final = _APPEND_TEMPLATE.format(
    head="""UPDATE streams
       SET version = $3, head_hash = $4, updated_at = $7
     WHERE id = $1 AND version = $2 AND head_hash = $11
    RETURNING id"""
)

APPEND_TO_NEW_STREAM: Final = _APPEND_TEMPLATE.format(
    head="""INSERT INTO streams (id, version, head_hash, created_at, updated_at)
    SELECT $1, $3, $4, $7, $7 WHERE $2::bigint = 0
    ON CONFLICT (id) DO NOTHING
    RETURNING id"""
)

EVENT_COLUMNS: Final = (
    "global_position, event_id, stream, position, type, schema_version, "
    "data::text, metadata::text, recorded_at, hash"
)
"""The column order `_event_from_row` expects (jsonb as text: decoded by our own parser)."""

READ_STREAM: Final = f"""
SELECT {EVENT_COLUMNS} FROM events
 WHERE stream = $1 AND position > $2
 ORDER BY position
 LIMIT $3
"""

READ_POSITIONS: Final = f"""
SELECT {EVENT_COLUMNS} FROM events
 WHERE stream = $1 AND position BETWEEN $2 AND $3
 ORDER BY position
"""

READ_ALL: Final = f"""
SELECT {EVENT_COLUMNS} FROM events
 WHERE global_position > $1
 ORDER BY global_position
 LIMIT $2
"""

OUTBOX_PENDING: Final = f"""
SELECT {", ".join(f"e.{column.strip()}" for column in EVENT_COLUMNS.split(","))},
       o.id, o.stream, o.message_id, o.channel, o.type, o.payload
  FROM outbox o LEFT JOIN events e ON e.global_position = o.global_position
 ORDER BY o.id
 LIMIT $1
"""
"""Waiting outbox entries in order: the event's columns (NULL for a message) first,
then the outbox's own (`rows.outbox_from_rows` reads them)."""

OUTBOX_REMOVE: Final = "DELETE FROM outbox WHERE id = ANY($1::bigint[])"

OUTBOX_BACKLOG: Final = """
SELECT count(*), extract(epoch FROM now() - min(enqueued_at))::float8 FROM outbox
"""

OUTBOX_WAKE: Final = "SELECT pg_notify($1, '')"
"""Wakes the leading reader (it LISTENs on the channel). Sent by a reader that does not
lead, in a transaction of its own that writes nothing: never inside an append."""

OUTBOX_LEAD: Final = "SELECT pg_try_advisory_lock($1)"
"""Session-level: held until the connection ends, so leadership dies with it."""

HEAD: Final = "SELECT version, head_hash FROM streams WHERE id = $1"

VERSIONS: Final = "SELECT id, version FROM streams WHERE id = ANY($1::text[])"
"""Many streams' versions in one indexed read (watchers' safety-net poll)."""

REQUEST: Final = """
SELECT fingerprint, first_position, last_position FROM stream_requests
 WHERE stream = $1 AND request_id = $2
"""

SAVE_SNAPSHOT: Final = """
WITH target AS (
    SELECT hash FROM events WHERE stream = $1 AND position = $2
), cleared AS (
    DELETE FROM snapshots
     WHERE stream = $1 AND key <> $3 AND EXISTS (SELECT 1 FROM target)
)
INSERT INTO snapshots AS s (stream, key, version, event_hash, data, saved_at)
SELECT $1, $3, $2, hash, $4::jsonb, $5 FROM target
ON CONFLICT (stream, key) DO UPDATE
   SET version = EXCLUDED.version, event_hash = EXCLUDED.event_hash,
       data = EXCLUDED.data, saved_at = EXCLUDED.saved_at
 WHERE s.version < EXCLUDED.version
RETURNING s.version
"""
"""$1 stream, $2 version, $3 key, $4 data (jsonb text), $5 saved_at. Stores the snapshot
only at an existing event (copying its hash) and only newer than the key's last one;
drops the stream's snapshots of other keys (code that folds differently)."""

READ_SNAPSHOT: Final = """
SELECT s.version, s.data::text, s.event_hash FROM snapshots s
  JOIN events e ON e.stream = s.stream AND e.position = s.version AND e.hash = s.event_hash
 WHERE s.stream = $1 AND s.key = $2
"""
"""A snapshot only while the event it was saved at is still in the log, unchanged."""

WRITABLE: Final = "SELECT pg_is_in_recovery(), (SELECT 1 FROM events LIMIT 1)"
"""Whether an append could be made now: the server is a primary (not a standby in
recovery) and the events table is there (SQLSTATE 42P01 when it is not)."""

SYNCHRONOUS_COMMIT: Final = "SELECT current_setting('synchronous_commit')"
"""The session's commit durability (`kozyr.eventstore.durability`)."""
