"""The clock service: turn clocks, presence, covering absent players, a table's voice channel."""
