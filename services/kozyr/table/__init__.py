"""The table service: runs the games' rules and owns every table's event log."""
