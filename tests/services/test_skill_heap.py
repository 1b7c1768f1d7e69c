"""A fit hands the C heap's free pages back (``services/skill/heap.py``): numpy arrays freed
below the heap's top stay resident until then (a 1,000,000-judgment fit was 272 MB
resident after reading its log, its table 33 MB)."""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = """
import json, os
import numpy as np
from agentladder.services.skill.heap import release_freed

def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20

start = resident()
arrays = [np.ones(12_800) for _ in range(3_000)]  # 100 KB each: taken from the heap
kept = arrays[-1]  # the heap's top stays in use, as a fit's table does
del arrays
freed = resident()
done = release_freed()
print(json.dumps([start, freed, resident(), done]))
"""


def test_the_heap_s_freed_pages_go_back_to_the_system() -> None:
    """300 MB of arrays freed below a live one stay resident, and ``release_freed`` gives
    them back (glibc)."""
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, check=True,
                         text=True, timeout=120)  # fmt: skip
    start, freed, after, done = json.loads(out.stdout)
    assert done, "no malloc_trim in this C library"
    assert freed - start > 200, (start, freed)  # freed, still resident
    assert freed - after > 200, (freed, after)  # given back
