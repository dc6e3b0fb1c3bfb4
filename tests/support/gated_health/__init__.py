"""A stand-in service that starts without serving (`python -m tests.support.gated_health`)."""
