"""The table's adapters: what the application needs of the world. Loading tables
(`repository`, `snapshots`), the `ListTables` read model (`directory`), the public
events on the outbox (`public_wire`) and their republishing (`republishing`), and the
wake-ups of watchers across replicas (`notifier`, `listener`, `poller`,
`schema_watch`). Below the app and the edge; above the pure domain."""
