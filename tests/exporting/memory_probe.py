"""Run as a process: the peak of Python memory (tracemalloc) while exporting one kind of
a store to a file, and while reading every agent's events at once (what an export that
loads everything holds). Prints the JSON of both peaks in bytes (``export``,
``load_all``) and the counts of items exported and events read (``items``, ``events``)."""

from __future__ import annotations

import asyncio
import json
import sys
import tracemalloc
from pathlib import Path

from agentladder.domain.skill.rules import SkillRules
from agentladder.exporting import COLUMNS, Format, Kind, items, write_export
from agentladder.store.url import open_store


async def main(url: str, kind: Kind, out: Path) -> dict[str, int]:
    """Both peaks, each from a fresh start of tracemalloc."""
    store = await open_store(url)
    try:
        tracemalloc.start()
        rows = items(store, kind, None, rules=SkillRules(), now=0.0)
        count = await write_export(rows, COLUMNS[kind], Format.JSONL, out)
        export_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        agents = [profile.id for profile in await store.list_profiles()]
        tracemalloc.start()
        everything = [await store.events(agent) for agent in agents]
        load_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        events = sum(map(len, everything))
        return {"export": export_peak, "load_all": load_peak, "items": count, "events": events}
    finally:
        await store.close()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], Kind(sys.argv[2]), Path(sys.argv[3])))))
