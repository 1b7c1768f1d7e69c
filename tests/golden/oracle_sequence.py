"""The judgment sequence whose awards are pinned in ``oracle_awards.json``.

Regenerate the golden file after an intended rule change with
``.venv/bin/python -m tests.golden.oracle_sequence`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentladder.domain.award import apply_judgment
from agentladder.domain.judgment import Judgment
from agentladder.domain.profile import new_profile
from agentladder.domain.rules import OracleRules

GOLDEN = Path(__file__).with_name("oracle_awards.json")
NOW = "2026-01-01T00:00:00+00:00"


def sequence() -> list[Judgment]:
    """60 judgments exercising every XP rule, both task types, failures and streaks."""
    items = []
    for i in range(60):
        items.append(
            Judgment(
                agent_id="gemini-2.0-flash",
                contract_id=f"task-{i:03d}",
                task_type="image_generation" if i % 3 else "text_analysis",
                score=[8.5, 9.2, 10.0, 6.0, 8.0, None][i % 6],
                success=i % 17 != 16,
                retries=i % 4 == 3,
                duration_ms=1000.0 * (i % 7),
                time_limit_ms=4000.0 if i % 2 else None,
                cost=0.01 * (i % 5),
                budget=0.03 if i % 5 != 4 else None,
            )
        )
    return items


def awards() -> list[dict[str, Any]]:
    """The awards of ``sequence()`` folded from a new profile, as JSON values."""
    profile = new_profile("gemini-2.0-flash", "google", "gemini-2.0-flash")
    out = []
    for item in sequence():
        award = apply_judgment(profile, item, OracleRules(), NOW)
        out.append(award.model_dump(mode="json", exclude={"profile"}))
        profile = award.profile
    out.append({"final_profile": profile.model_dump(mode="json")})
    return out


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(awards(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
