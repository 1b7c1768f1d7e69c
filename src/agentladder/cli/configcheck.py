"""``agentladder config check``: every error of a configuration file, not only the first.

``load_settings`` stops at the first error (what ``serve`` needs); ``config_problems``
goes on: each agent is checked on its own, names are checked for duplicates, and the
other sections are checked beside the agents that are valid, so that one run lists what
to fix in the whole file. Each problem is an ``InvalidInput`` naming its path, as
``load_settings`` names the first.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import yaml
from pydantic import ValidationError

from agentladder.cli.startup import check_store_url
from agentladder.config import (
    AgentSettings,
    Settings,
    check_judge,
    check_shares,
    config_errors,
    load_settings,
)
from agentladder.domain.agents import entry_path
from agentladder.errors import InvalidInput

__all__ = ["config_problems"]


def config_problems(path: Path) -> list[InvalidInput]:
    """Every error of the configuration file at ``path`` (none: it is valid), its store URL
    included; the first is the one ``load_settings`` raises."""
    try:
        settings = load_settings(path)
    except InvalidInput as error:
        first = error
    else:
        try:
            check_store_url(settings.store)
        except InvalidInput as error:
            return [error]
        return []
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return [first]  # the file itself is the error
    if not isinstance(document, Mapping):
        return [first]
    found = _problems(dict(document))
    return found if len(found) > 1 else [first]


def _problems(values: dict[str, object]) -> list[InvalidInput]:
    problems: list[InvalidInput] = []
    entries = values.pop("agents", None) or []
    if not isinstance(entries, list):
        problems.append(InvalidInput("agents", entries, "must be a list"))
        entries = []
    agents: list[AgentSettings] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            problems.append(InvalidInput(f"agents[{index}]", entry, "must be a mapping"))
            continue
        name = entry.get("name")
        if isinstance(name, str) and name in seen:
            reason = f"duplicates agents[{seen[name]}].name"
            problems.append(InvalidInput(f"agents[{index}].name", name, reason))
            continue
        if isinstance(name, str):
            seen[name] = index
        try:
            agents.append(AgentSettings.model_validate(entry))
        except ValidationError as error:
            problems += config_errors(error, AgentSettings, entry_path(index, entry))
    store = values.pop("store", None)
    if isinstance(store, str):
        try:
            check_store_url(store)
        except InvalidInput as error:
            problems.append(error)
    elif store is not None:
        values["store"] = store  # not a string: its own error, below
    try:
        settings = Settings.model_validate({**values, "agents": agents})
    except ValidationError as error:
        problems += config_errors(error, Settings)
        return problems
    try:
        check_judge(settings)
    except InvalidInput as error:
        problems.append(error)
    return problems + check_shares(settings)
