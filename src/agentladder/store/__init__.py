"""Storage: one contract (``Store``), opened from a URL by ``open_store``.

- ``memory://``: the in-memory reference fake, for tests (yours too).
- ``sqlite:///path/to/file.db``: the embedded default (``sqlite:///agentladder.db``).
- ``nats://host:port[,host:port...]``: NATS JetStream, for several service instances.
"""
