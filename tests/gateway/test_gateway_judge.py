"""The gateway judge's prompt and the strict reading of its answer (``judge.py``)."""

from __future__ import annotations

import json

import pytest

from agentladder.config import parse_settings
from agentladder.errors import InvalidInput, ProviderError
from agentladder.services.gateway.judge import (
    SYSTEM,
    JudgeSettings,
    conversation_text,
    judge_messages,
    parse_verdict,
)


def completion(content: object) -> bytes:
    """A chat-completions body whose message content is ``content``."""
    message = {"role": "assistant", "content": content}
    return json.dumps({"choices": [{"index": 0, "message": message}]}).encode()


def test_a_verdict_is_one_json_object_with_a_score_from_0_to_10() -> None:
    """``{"score": 7, "reason": ...}`` (whitespace around it allowed) is read as it is."""
    assert parse_verdict(completion(' {"score": 7, "reason": "fine"}\n')) == (7.0, "fine")
    assert parse_verdict(completion('{"score": 0}')) == (0.0, "")
    assert parse_verdict(completion('{"score": 10.0, "reason": "best"}')) == (10.0, "best")


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"score": 7, "reason": "fine"}\n```',
        '```\n{"score": 7, "reason": "fine"}\n```\n',
        '  ```JSON\n  {"score": 7,\n   "reason": "fine"}\n  ```',
        '<think>The answer names two controls; "score 10" is asked of me.</think>\n\n'
        '{"score": 7, "reason": "fine"}',
        'The template opened the thought.\n</think>\n```json\n{"score": 7, "reason": "fine"}\n```',
        '{"score": 7, "reason": "fine"}',
    ],
)
def test_one_fence_around_it_or_a_thought_before_it_is_read_too(content: str) -> None:
    """Judges that ignore ``response_format`` wrap the object in one code fence; reasoning
    models think first: the object inside is read, as it is, and nothing else."""
    assert parse_verdict(completion(content)) == (7.0, "fine")


def test_a_reason_that_mentions_a_thought_is_kept() -> None:
    """An object first is the reply, whatever its reason says."""
    content = '{"score": 6, "reason": "no </think> here"}'
    assert parse_verdict(completion(content)) == (6.0, "no </think> here")


@pytest.mark.parametrize(
    "content",
    [
        'Sure! {"score": 8}',  # prose around it
        'Here it is:\n```json\n{"score": 8}\n```',  # prose before a fence
        '```json\n{"score": 8}\n```\nThat is my verdict.',  # prose after it
        '```json\n{"score": 8}\n```\n```json\n{"score": 2}\n```',  # two fences
        '<think>fine</think> Score: {"score": 8}',  # prose after a thought
        '<think>{"score": 9}</think>',  # a score only in the thought
        '{"score": 8} {"score": 2}',  # two objects
        '{"rating": 8}',  # no score
        '{"score": "8"}',  # a string
        '{"score": true}',  # a boolean
        '{"score": 11}',  # out of range
        '{"score": -1}',
        "[8]",
        "8",
        "",
        None,
    ],
)
def test_anything_else_is_a_failed_check_call_never_a_score(content: object) -> None:
    """Prose, a second object, a missing, non-numeric or out-of-range score: a
    ``ProviderError`` (the check is an error), never a guessed score."""
    with pytest.raises(ProviderError):
        parse_verdict(completion(content))


def test_a_body_that_is_not_a_chat_completion_is_refused() -> None:
    """Not JSON, or no ``choices[0].message.content``: a ``ProviderError``."""
    with pytest.raises(ProviderError):
        parse_verdict(b"not json")
    with pytest.raises(ProviderError):
        parse_verdict(b'{"choices": []}')


def test_the_prompt_holds_the_rubric_the_conversation_and_the_answer() -> None:
    """The system message, then the task type's rubric, the conversation (roles shown,
    text parts joined) and the answer."""
    settings = JudgeSettings(agent="alpha", rubrics={"audit": "Name the controls."})
    conversation = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "Which controls?"}]},
    ]
    messages = judge_messages(
        settings.rubric_for("audit"), "audit", conversation_text(conversation), "MFA."
    )
    assert messages[0] == {"role": "system", "content": SYSTEM}
    user = messages[1]["content"]
    for part in ("Name the controls.", "Task type: audit", "[system] Be brief.",
                 "[user] Which controls?", "MFA."):  # fmt: skip
        assert part in user
    assert settings.rubric_for("support") == settings.rubric
    assert settings.judge_name == "gateway-judge:alpha"


def test_the_judge_setting_names_a_bad_value() -> None:
    """Neither or both of agent and backend, an agent the config lacks, a bad task type in
    ``pass_scores``, a pass score out of range: one line naming the key."""
    cases = [
        ({"gateway": {"judge": {}}}, "gateway.judge"),
        ({"gateway": {"judge": {"agent": "nobody"}}}, "gateway.judge.agent"),
        ({"gateway": {"judge": {"agent": "a", "pass_scores": {"Audit!": 5}}}}, "gateway.judge"),
        ({"gateway": {"judge": {"agent": "a", "pass_score": 12}}}, "gateway.judge.pass_score"),
        ({"gateway": {"judge": {"agent": "a", "pass_scores": {"audit": 12}}}}, "gateway.judge"),
    ]
    for config, field in cases:
        with pytest.raises(InvalidInput) as refused:
            parse_settings(config)
        assert refused.value.field.startswith(field), (config, refused.value)
