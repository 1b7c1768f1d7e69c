"""The embedded default store: one SQLite file in WAL mode (``sqlite:///path.db``).

- ``store``: the ``Store`` implementation, reads on reader connections;
- ``writer``: the single writer thread with group commit;
- ``ops``: the SQL of every write and read, as plain functions over a connection;
- ``schema``: the numbered migrations;
- ``directory``: agents' objects and the directory built in one query.
"""
