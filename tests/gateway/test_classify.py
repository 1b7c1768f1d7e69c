"""The classifier's pure parts (``services/gateway/classify.py``): its settings, the rules
on the last user message, the agent's prompt and the strict reading of its answer."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agentladder.errors import ProviderError
from agentladder.services.gateway.classify import (
    SYSTEM,
    ClassifyRule,
    ClassifySettings,
    classifier_messages,
    last_user_text,
    parse_task_type,
    rule_hit,
)

RULES = (
    ClassifyRule(task_type="code", keywords=("traceback", "stack trace", "c++")),
    ClassifyRule(task_type="sql", pattern=r"\bselect\b.+\bfrom\b"),
    ClassifyRule(task_type="writing", keywords=("essay",)),
)


@pytest.mark.parametrize(
    ("text", "task_type"),
    [
        ("Here is my Traceback, what broke?", "code"),
        ("the STACK\n  TRACE says nothing", "code"),
        ("Is C++ faster?", "code"),
        ("SELECT name FROM users", "sql"),
        ("An essay on SQL: select words from a list", "sql"),  # the first rule that matches
        ("Write an essay", "writing"),
        ("my tracebacks are long", None),  # whole words: tracebacks is not traceback
        ("essayist", None),
        ("", None),
    ],
)  # fmt: skip
def test_the_first_rule_that_matches_gives_the_task_type(text: str, task_type: str | None) -> None:
    """Keywords match as whole words (a phrase across any whitespace), patterns anywhere,
    both ignoring case; rules are tried in order."""
    assert rule_hit(RULES, text) == task_type


def test_the_last_user_message_is_read_up_to_max_chars() -> None:
    """The last message whose role is user: a string, or its text parts; cut at
    ``max_chars``; none: empty."""
    messages = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "an answer"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "second"},
                {"type": "image_url", "image_url": {"url": "x"}},
                {"type": "text", "text": "question"},
            ],
        },
        {"role": "tool", "content": "tool output"},
    ]
    assert last_user_text(messages, 100) == "second\nquestion"
    assert last_user_text(messages, 3) == "sec"
    assert last_user_text([{"role": "system", "content": "only"}], 100) == ""
    assert last_user_text(["not a message"], 100) == ""


def test_the_agent_is_shown_the_task_types_and_the_request() -> None:
    """The system message, then the task types allowed and the request between markers."""
    messages = classifier_messages("Fix my query", ["sql", "code"])
    assert messages[0] == {"role": "system", "content": SYSTEM}
    user = messages[1]["content"]
    assert "Task types: sql, code" in user
    assert "<<<\nFix my query\n>>>" in user


def _reply(content: object) -> bytes:
    message = {"role": "assistant", "content": content}
    return json.dumps({"choices": [{"index": 0, "message": message}]}).encode()


@pytest.mark.parametrize(
    ("content", "task_type"),
    [("sql", "sql"), ("  SQL\n", "sql"), ("<think>hmm, a query</think>\ncode", "code"),
     ("reasoning first</think> sql", "sql")],
)  # fmt: skip
def test_an_answer_that_is_one_task_type_is_read(content: str, task_type: str) -> None:
    """Exactly one of the types, case and surrounding whitespace aside, and a reasoning
    model's thinking before it."""
    assert parse_task_type(_reply(content), ["sql", "code"]) == task_type


@pytest.mark.parametrize(
    "body",
    [_reply("poetry"), _reply("sql, code"), _reply("The task type is sql."), _reply("`sql`"),
     _reply(None), _reply(""), b"not json", b'{"choices": []}', b"[]"],
)  # fmt: skip
def test_anything_else_is_a_failure_never_a_guess(body: bytes) -> None:
    """A type not listed, two, a sentence, quotes, no content, not a chat completion."""
    with pytest.raises(ProviderError):
        parse_task_type(body, ["sql", "code"])


def test_the_agent_chooses_among_the_listed_types_else_the_rules_and_default() -> None:
    """``choices``: ``task_types`` when listed, else the rules' and the default's in order,
    each once."""
    listed = ClassifySettings(agent="sorter", task_types=("writing", "code"), rules=RULES)
    assert listed.choices == ("writing", "code")
    derived = ClassifySettings(agent="sorter", rules=RULES, default="code")
    assert derived.choices == ("code", "sql", "writing")


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({}, "give rules, an agent or a default"),
        ({"agent": "sorter"}, "the agent needs task types to choose from"),
        ({"rules": [{"task_type": "code"}]}, "exactly one of keywords"),
        ({"rules": [{"task_type": "code", "keywords": ["x"], "pattern": "x"}]},
         "exactly one of keywords"),
        ({"rules": [{"task_type": "code", "keywords": ["  "]}]}, "a keyword must be"),
        ({"rules": [{"task_type": "code", "pattern": "a("}]}, "not a valid regular expression"),
        ({"default": "General"}, "should match pattern"),
        ({"default": "x", "task_types": ["x", "x"]}, "listed twice"),
        ({"default": "x", "task_types": ["Bad Type"]}, "must match"),
    ],
)  # fmt: skip
def test_bad_settings_are_refused_saying_why(settings: dict[str, object], said: str) -> None:
    """Nothing to do, an agent with nothing to choose from, a rule with neither or both
    tests, a blank keyword, a pattern that does not compile, bad task types."""
    with pytest.raises(ValidationError) as refused:
        ClassifySettings.model_validate(settings)
    assert said in str(refused.value)
