"""The table's domain: pure. The aggregate and its table-level events, the fold
(`model`), the table decision (`decision`), the public events an append makes
(`public`), the redaction of history per seat (`history`), the seed scheme
(`seeding`) and the games a table can run (`games`). No I/O, no clock, no randomness
(seeds come in): import-linter's `table-domain-pure` guards it (pyproject.toml)."""
