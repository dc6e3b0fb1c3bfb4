"""What the other processes share with the table context (kozyr.table), and no more:
reading its public events off NATS (`public`) and its table ids with their refusals
(`refusals`). Services never import each other, so the bots, the clock and
matchmaking read these here; the table service writes what they read."""
