"""The matchmaking service: tickets, queues, parties, fair teams, computer fill, ratings."""
