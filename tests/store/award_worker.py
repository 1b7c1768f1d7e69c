"""A separate OS process that applies judgments to one agent and reports each one acked.

``python -m tests.store.award_worker URL AGENT PREFIX COUNT`` prints ``ACK <contract_id>``
(flushed) after each commit returns, so a test that kills it knows what was acknowledged.
"""

from __future__ import annotations

import asyncio
import functools
import sys

from agentladder.store.retry import retry_on_conflict
from agentladder.store.url import open_store
from tests.store.builders import award, judgment


async def main(url: str, agent_id: str, prefix: str, count: int) -> None:
    """Apply ``count`` judgments ``<prefix>-0`` ... with retries on conflict."""
    store = await open_store(url)
    try:
        for i in range(count):
            item = judgment(agent_id, f"{prefix}-{i}", score=float(i % 11), task_type=f"t{i % 3}")
            await retry_on_conflict(
                functools.partial(award, store, item), op="award", attempts=10_000
            )
            sys.stdout.write(f"ACK {item.contract_id}\n")
            sys.stdout.flush()
    finally:
        await store.close()


if __name__ == "__main__":
    url, agent, prefix, count = sys.argv[1:5]
    asyncio.run(main(url, agent, prefix, int(count)))
