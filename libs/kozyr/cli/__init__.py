"""The `kozyr` command line: moderator and developer tools (docs/moderation.md).

`kozyr replay`, `kozyr verify` (settle a disputed game from the event log),
`kozyr token` (development tokens) and `kozyr migrate` (event store schema).
"""
