"""The table domain every service shares: the table aggregate and its events, the fold,
loading tables from the log (cache and snapshots), the redaction of history, and
replay/verify for moderators. No gRPC, no NATS: the table service is one user of it,
the CLI another."""
