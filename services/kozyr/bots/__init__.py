"""The bots service: computer players that act through the table API, see only their seat."""
