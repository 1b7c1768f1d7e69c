"""Loading the YAML configuration: the specification's example, defaults, named errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentladder.config import load_settings, parse_settings
from agentladder.domain.agents import AgentConfig
from agentladder.errors import InvalidInput

SPEC_EXAMPLE = """\
agents:
  - name: "audit_expert"
    provider_id: "openai"
    model_name: "gpt-4o"
    description: "Financial audit specialist — compliance, risk, regulatory analysis"
    capability_tags: ["audit", "compliance", "legal", "financial"]
    signing_schemes: ["eip712"]    # placeholder for future crypto signing
    input_price_per_mtok: 2.5
    output_price_per_mtok: 10.0

orchestrator:
  rank_bucket: "nsed_agent_ranks"    # NATS KV bucket name (default)
"""


def test_specification_yaml_loads_verbatim(tmp_path: Path) -> None:
    """The agents and orchestrator sections of the ranking specification load as written."""
    path = tmp_path / "agents.yaml"
    path.write_text(SPEC_EXAMPLE, encoding="utf-8")
    settings = load_settings(path)
    assert [a.name for a in settings.agents] == ["audit_expert"]
    assert settings.agents[0].estimated_cost_per_round == pytest.approx(0.025)
    assert settings.orchestrator.rank_bucket == "nsed_agent_ranks"
    assert settings.oracle.xp.task_completed == 10


def test_empty_file_is_a_valid_configuration(tmp_path: Path) -> None:
    """An empty file gives every default: no agents, SQLite store, the specs' rule tables."""
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    settings = load_settings(path)
    assert settings.agents == ()
    assert settings.store == "sqlite:///agentladder.db"
    assert settings.orchestrator.scope_rounds == {"quick": 1, "standard": 2, "deep": 3}


def test_oracle_section_overrides_rule_tables() -> None:
    """oracle: in the config overrides the XP tables, keeping the rest."""
    settings = parse_settings({"oracle": {"xp": {"first_try": 7}}})
    assert settings.oracle.xp.first_try == 7
    assert settings.oracle.xp.task_completed == 10


def test_duplicate_agent_names_are_refused() -> None:
    """Two agents with the same name are refused naming the second one's path."""
    with pytest.raises(InvalidInput) as caught:
        parse_settings({"agents": [{"name": "a"}, {"name": "a"}]})
    assert caught.value.field == "agents[1].name"
    assert caught.value.value == "a"


def test_unknown_section_is_refused() -> None:
    """A misspelt top-level section is an error, not silently ignored."""
    with pytest.raises(InvalidInput) as caught:
        parse_settings({"orchestrater": {}})
    assert str(caught.value) == "orchestrater: unknown key (did you mean orchestrator?) ({})"


def test_bad_bucket_name_is_refused() -> None:
    """A rank bucket name that NATS cannot use is refused naming the field."""
    with pytest.raises(InvalidInput) as caught:
        parse_settings({"orchestrator": {"rank_bucket": "ranks.v1"}})
    assert caught.value.field == "orchestrator.rank_bucket"
    assert caught.value.value == "ranks.v1"


def test_unreadable_and_malformed_files_name_the_path(short_path: Path) -> None:
    """A missing file and invalid YAML are InvalidInput errors naming the file."""
    missing = short_path / "nope.yaml"
    with pytest.raises(InvalidInput) as caught:
        load_settings(missing)
    assert caught.value.field == "config"
    assert str(missing) in str(caught.value)
    broken = short_path / "broken.yaml"
    broken.write_text("agents: [", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not valid YAML"):
        load_settings(broken)


def test_a_document_that_is_not_a_mapping_is_refused() -> None:
    """A YAML list at the top level is refused."""
    with pytest.raises(InvalidInput) as caught:
        parse_settings(["agents"])
    assert caught.value.field == "config"


@pytest.mark.parametrize(
    ("data", "field", "reason"),
    [
        (
            {"agents": [{"name": "a", "capabilty_tags": ["x"]}]},
            "agents[a].capabilty_tags",
            "unknown key (did you mean capability_tags?)",
        ),
        (
            {"agents": [{"name": "a", "input_price_per_mtk": 1}]},
            "agents[a].input_price_per_mtk",
            "unknown key (did you mean input_price_per_mtok?)",
        ),
        (
            {"agents": [{"name": "a", "backend": {"kind": "simulated", "qualty": 5}}]},
            "agents[a].backend.simulated.qualty",
            "unknown key (did you mean quality?)",
        ),
        (
            {"orchestrator": {"timeout": 3}},
            "orchestrator.timeout",
            "unknown key (did you mean timeout_s?)",
        ),
        (
            {"api": {"max_body_byte": 2048}},
            "api.max_body_byte",
            "unknown key (did you mean max_body_bytes?)",
        ),
        (
            {"api": {"tokens": [{"role": "admin", "token_envv": "X"}]}},
            "api.tokens[0].token_envv",
            "unknown key (did you mean token_env?)",
        ),
        ({"oracle": {"xpp": {}}}, "oracle.xpp", "unknown key (did you mean xp?)"),
        ({"skill": {"zzzz": 1}}, "skill.zzzz", "unknown key"),
    ],
)
def test_unknown_keys_are_refused_everywhere(data: object, field: str, reason: str) -> None:
    """An unknown key in any section or agent is refused naming its path and the closest key."""
    with pytest.raises(InvalidInput) as caught:
        parse_settings(data)
    assert (caught.value.field, caught.value.reason) == (field, reason)


def test_section_errors_are_one_line_naming_the_path() -> None:
    """A bad value in a section is one line: its path, the problem and the value."""
    with pytest.raises(InvalidInput) as caught:
        parse_settings({"orchestrator": {"max_running": 0}})
    assert str(caught.value) == (
        "orchestrator.max_running: Input should be greater than or equal to 1 (0)"
    )
    with pytest.raises(InvalidInput) as caught:
        parse_settings({"api": {"trusted_proxies": ["nope"]}})
    assert caught.value.field == "api.trusted_proxies"
    assert caught.value.reason == "'nope' is not an IP address or network"


def test_heartbeat_declarations_still_ignore_unknown_fields() -> None:
    """An agent's declaration outside the YAML (a heartbeat) keeps ignoring unknown fields."""
    assert AgentConfig.model_validate({"name": "a", "future_field": 1}).name == "a"


def test_a_relative_sqlite_store_resolves_against_the_config_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """store: sqlite:///relative.db in a file names the file beside the configuration,
    whatever the working directory; options are kept; absolute paths, memory:// and a file
    without a store key are left as they are."""
    folder = tmp_path / "conf"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    path = folder / "agents.yaml"
    cases = {
        "store: sqlite:///data/ladder.db": f"sqlite:///{folder / 'data' / 'ladder.db'}",
        "store: sqlite:///ladder.db?synchronous=normal": (
            f"sqlite:///{folder / 'ladder.db'}?synchronous=normal"
        ),
        "store: sqlite:////srv/ladder.db": "sqlite:////srv/ladder.db",
        "store: memory://": "memory://",
        "store: nats://127.0.0.1:4222": "nats://127.0.0.1:4222",
        "agents: []": "sqlite:///agentladder.db",
    }
    for text, expected in cases.items():
        path.write_text(text + "\n", encoding="utf-8")
        assert load_settings(Path("..") / "conf" / "agents.yaml").store == expected, text
    assert parse_settings({"store": "sqlite:///ladder.db"}).store == "sqlite:///ladder.db"
