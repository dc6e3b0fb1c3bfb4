"""`kozyr play`: a terminal client (Textual) for 3-5-8 and Khözör.

The parts, from the wire up: `endpoints` (where the services are, which token),
`lobby` (matchmaking: a queue, a private table, a party → a table id), `session`
(one seat at one table: the watch stream, moves, hints, reconnecting), `controls`
(the pure selection model: cursor, marks, the move to send), `render` and its game
modules (pure functions from a view to text), and `app` (the Textual widgets).
Only `app` knows Textual; only `lobby` and `session` talk to the services
(`endpoints` reads the environment and the dev key). docs/play.md.
"""
