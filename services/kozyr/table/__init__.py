"""The table context, which is the table service: it runs the games' rules and owns
every table's event log. Its layers are its folders — `domain` (pure), `adapters`,
`app`, `edge` (gRPC), and `audit` apart for moderators — held by import-linter
(pyproject.toml; docs/architecture.md, "The table context")."""
