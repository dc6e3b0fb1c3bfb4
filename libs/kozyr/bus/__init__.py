"""NATS JetStream for kozyr (DESIGN.md §5): subjects, streams, the outbox relay, consumers."""
