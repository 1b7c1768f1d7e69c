"""Run as a process: the peak of Python memory (tracemalloc) while exporting one kind of
a store to a file and, with ``--load-all``, while reading every agent's events at once
(what an export that loads everything holds). Prints the JSON of the peaks in bytes
(``export``, and ``load_all``) and the counts of items exported and events read
(``items``, and ``events``)."""

from __future__ import annotations

import asyncio
import json
import sys
import tracemalloc
from pathlib import Path

from agentladder.domain.skill.rules import SkillRules
from agentladder.exporting import COLUMNS, Format, Kind, items, write_export
from agentladder.store.url import open_store


async def main(url: str, kind: Kind, out: Path, load_all: bool) -> dict[str, int]:
    """The export's peak and, when ``load_all``, the peak of reading everything, each from
    a fresh start of tracemalloc."""
    store = await open_store(url)
    try:
        tracemalloc.start()
        rows = items(store, kind, None, rules=SkillRules(), now=0.0)
        count = await write_export(rows, COLUMNS[kind], Format.JSONL, out)
        export_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        peaks = {"export": export_peak, "items": count}
        if load_all:
            agents = [profile.id for profile in await store.list_profiles()]
            tracemalloc.start()
            everything = [await store.events(agent) for agent in agents]
            peaks["load_all"] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            peaks["events"] = sum(map(len, everything))
        return peaks
    finally:
        await store.close()


if __name__ == "__main__":
    url, kind, out, *flags = sys.argv[1:]
    print(json.dumps(asyncio.run(main(url, Kind(kind), Path(out), "--load-all" in flags))))
