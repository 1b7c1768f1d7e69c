"""An import's last step in a fresh image of the program (``cli/handoff.py``):
``python -m agentladder.importing.last_step FILE [--json] [--debug]``.

``FILE`` (private, ``0600``, removed once read) holds what the importing image knew: the
summary so far, the store's URL and the skill rules. This image fits the skill model to
the whole log, adds the fit's time to the summary and prints the import's report, as an
import that fits in place does. It loads the store and the skill model only, not the
command line and its services (79 MB resident before the fit against 99), since its peak
is the command's (docs/import.md, "Memory"). A failure is one line on standard error and
exit 1 (``--debug``: the traceback), as the command line reports it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from agentladder.domain.skill.rules import SkillRules
from agentladder.importing.report import FITTED, exit_status, report_lines
from agentladder.importing.run import Summary
from agentladder.services.clock import SystemClock
from agentladder.services.skill.service import SkillService
from agentladder.store.url import open_store

__all__ = ["hand_over", "main"]


def hand_over(summary: Summary, store: str, rules: SkillRules) -> str:
    """What the last step needs, as the text its file holds."""
    return json.dumps(
        {
            "summary": summary.model_dump(mode="json"),
            "store": store,
            "skill": rules.model_dump(mode="json"),
        }
    )


async def _fit(url: str, rules: SkillRules) -> None:
    store = await open_store(url)
    try:
        await SkillService(store, rules, SystemClock()).fit()
    finally:
        await store.close()


def _run(path: Path, as_json: bool) -> int:
    try:
        text = path.read_text()
    finally:
        path.unlink(missing_ok=True)
    handed = json.loads(text)
    summary = Summary.model_validate(handed["summary"])
    if not as_json:
        print("fitting the skill model to the whole log", file=sys.stderr, flush=True)
    started = time.perf_counter()
    asyncio.run(_fit(handed["store"], SkillRules.model_validate(handed["skill"])))
    summary.notes.append(FITTED)
    summary.seconds += time.perf_counter() - started
    summary.per_second = summary.items / summary.seconds if summary.seconds else 0.0
    out, errors = report_lines(summary, as_json)
    for line in errors:
        print(line, file=sys.stderr)
    for line in out:
        print(line)
    return exit_status(summary)


def main(argv: list[str]) -> int:
    """Run the last step; its exit status."""
    debug = "--debug" in argv
    as_json = "--json" in argv
    files = [arg for arg in argv if not arg.startswith("--")]
    if len(files) != 1:
        print("error: usage: last_step FILE [--json] [--debug]", file=sys.stderr)
        return 2
    try:
        return _run(Path(files[0]), as_json)
    except Exception as error:
        if debug:
            raise
        from agentladder.cli.oneline import describe  # noqa: PLC0415 (only on failure)

        print(f"error: {describe(error)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
