"""The rules of agentladder, pure: values in, values out, no I/O.

Nothing under this package imports sqlite3, asyncio, nats or fastapi; a test asserts it.
"""
