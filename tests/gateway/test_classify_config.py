"""``gateway.classify`` and the aliases' floors in the configuration: each mistake is one
line naming its key and value, from ``serve``'s loading and from ``config check``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentladder.cli import app
from agentladder.config import parse_settings
from agentladder.errors import InvalidInput

AGENTS = [
    {"name": "sorter", "backend": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1",
                                   "model": "m"}},
    {"name": "sim", "backend": {"kind": "simulated"}},
]  # fmt: skip


@pytest.mark.parametrize(
    ("gateway", "line"),
    [
        ({"classify": {"rules": [{"task_type": "code", "keywords": ["x"]},
                                 {"task_type": "sql", "pattern": "select (from"}]}},
         "gateway.classify.rules[1].pattern: not a valid regular expression: missing ),"
         " unterminated subpattern at position 7 ('select (from')"),
        ({"classify": {"agent": "nobody", "task_types": ["code"]}},
         "gateway.classify.agent: must name an agent of the config with an"
         " OpenAI-compatible backend (not remote) ('nobody')"),
        ({"classify": {"agent": "sim", "task_types": ["code"]}},
         "gateway.classify.agent: must name an agent of the config with an"
         " OpenAI-compatible backend (not remote) ('sim')"),
        ({"models": {"cheap": {"task_type": "audit", "strategy": "cheapest_above"}}},
         "gateway.models.cheap: strategy cheapest_above needs a quality_floor or a"
         " quality_floor_share ({'task_type': 'audit', 'strategy': 'cheapest_above'})"),
        ({"models": {"near": {"strategy": "cheapest_above", "quality_floor_share": 1.5}}},
         "gateway.models.near.quality_floor_share: Input should be less than or equal to 1"
         " (1.5)"),
        ({"models": {"near": {"strategy": "cheapest_above", "quality_floor": 7,
                              "quality_floor_share": 0.9}}},
         "gateway.models.near: give one of quality_floor and quality_floor_share, not both"
         " ({'strategy': 'cheapest_above', 'quality_floor': 7, 'quality_floor_share': 0.9})"),
        ({"models": {"near": {"task_type": "audit", "confidence": 0.9}}},
         "gateway.models.near: quality_floor_share and confidence apply to strategy"
         " cheapest_above only, not best ({'task_type': 'audit', 'confidence': 0.9})"),
        ({"models": {"near": {"strategy": "cheapest_above", "quality_floor": 7,
                              "confidence": 0.4}}},
         "gateway.models.near.confidence: Input should be greater than or equal to 0.5"
         " (0.4)"),
        ({"models": {"smart": {"explore_share": 0.5}}},
         "gateway.models.smart: explore_share applies to strategies explore and"
         " cheapest_above ({'explore_share': 0.5})"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_one_line_naming_its_key_and_value(
    gateway: dict[str, object], line: str
) -> None:
    """A pattern that does not compile, a classifier agent the config lacks (or one it
    cannot call over HTTP), an alias's cheapest_above without a floor, a share out of
    range, two floors, a confidence without cheapest_above or out of range, an explore
    share with best."""
    with pytest.raises(InvalidInput) as refused:
        parse_settings({"gateway": gateway, "agents": AGENTS})
    assert str(refused.value) == line
    assert "\n" not in line


def test_an_alias_with_a_relative_floor_parses() -> None:
    """cheapest_above with ``quality_floor_share``, ``confidence`` and ``explore_share``."""
    settings = parse_settings(
        {"gateway": {"models": {"near": {
            "task_type": "audit", "strategy": "cheapest_above", "quality_floor_share": 0.95,
            "confidence": 0.9, "explore_share": 0.0,
        }}}}
    )  # fmt: skip
    near = settings.gateway.models["near"]
    assert (near.quality_floor_share, near.confidence, near.explore_share) == (0.95, 0.9, 0.0)


BAD = """
gateway:
  models:
    cheap: {task_type: audit, strategy: cheapest_above}
  classify:
    rules:
      - {task_type: sql, pattern: "select (from"}
"""


def test_config_check_lists_each_mistake_on_its_line(tmp_path: Path) -> None:
    """``agentladder config check``: the bad pattern and the alias without a floor, one
    line each naming the key and the value; exit 1."""
    path = tmp_path / "bad.yaml"
    path.write_text(BAD, encoding="utf-8")
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("error: gateway.models.cheap: strategy cheapest_above needs")
    assert lines[1].startswith("error: gateway.classify.rules[0].pattern: not a valid regular")
    assert lines[1].endswith("('select (from')")
