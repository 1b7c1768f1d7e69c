"""The distributed store: NATS JetStream KV buckets and one stream (``nats://host:port``).

- ``store``: the ``Store`` implementation over the parts below;
- ``config``: options, names, and how nats-py errors become agentladder errors;
- ``io``: connecting, creating buckets and streams, reading;
- ``batch``: JetStream atomic batch publish;
- ``ranks``: rank stats in the rank bucket, compare-and-set by revision;
- ``oracle``: the Oracle's event stream, applied once by idempotency claims;
- ``index``: the leaderboard index fed by the Oracle stream;
- ``records``: registrations and deliberation records;
- ``leases``: the service instances' leases.
"""
