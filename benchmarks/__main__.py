"""Run every benchmark module (``benchmarks/bench_*.py``), or those named on the command line.

Each module has a ``main() -> None`` that prints its figures as ratios against a
baseline measured in the same run. ``make bench`` runs this.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Run the selected benchmarks; return the process exit code."""
    found = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    selected = [name for name in found if not argv or name in argv or name[6:] in argv]
    unknown = [name for name in argv if name not in found and f"bench_{name}" not in found]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(found)}")
        return 2
    if not selected:
        print("no benchmarks yet")
        return 0
    for name in selected:
        print(f"== {name}")
        importlib.import_module(f"benchmarks.{name}").main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
