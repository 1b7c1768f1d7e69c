"""No secret leaves through an error: the redaction rules, ``shown_url`` and the redaction
of stored records' failure texts (``domain/redact.py``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentladder.domain.deliberation_record import (
    DeliberationRecord,
    EvaluationRecord,
    ProposalRecord,
    RoundRecord,
)
from agentladder.domain.redact import (
    MIN_SECRET_CHARS,
    REDACTED,
    RULES,
    Redactor,
    redact,
    redacted_fields,
    shown_url,
)

KEY = "sk-live-0123456789abcdefABCDEF"

SHAPES = [
    ("Authorization: Bearer abcDEF0123456789", "Authorization: Bearer [redacted]"),
    ("authorization: basic c3ZjOlBBU1NXT1JE", "authorization: basic [redacted]"),
    (f"Incorrect API key provided: {KEY}.", "Incorrect API key provided: [redacted]."),
    ("key sk-proj-AbCdEf0123456789_xyz-Q", "key [redacted]"),
    ("key sk-ant-api03-AbCdEf0123456789xyz", "key [redacted]"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "aws [redacted] here"),
    ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh [redacted]"),
    ("pat github_pat_11ABCDEFG0123456789_abcdefghijkl", "pat [redacted]"),
    ("slack xoxb-1234567890-abcdefghij", "slack [redacted]"),
    ("google AIzaSyA-0123456789abcdefghijklmnopqrstu", "google [redacted]"),
    ("hf hf_abcdefghijklmnopqrstuvwxyz012345", "hf [redacted]"),
    ("stripe sk_live_0123456789abcdefgh", "stripe [redacted]"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlMDEy end", "jwt [redacted] end"),
    ("http://svc:PASSWORD@vllm:8000/v1 failed", "http://[redacted]@vllm:8000/v1 failed"),
    ("https://svc:p@ss@vllm/v1", "https://[redacted]@vllm/v1"),
    ("https://TOKEN123@host/x", "https://[redacted]@host/x"),
    ("GET /v1?api_key=s3cr3t&model=m", "GET /v1?api_key=[redacted]&model=m"),
    ("GET /v1?model=m&key=s3cr3t#f", "GET /v1?model=m&key=[redacted]#f"),
    ("GET /v1?token=s3cr3t x", "GET /v1?token=[redacted] x"),
]

ORDINARY = [
    "a bearer token is required",
    "use 'Authorization: Bearer <token>'",
    "answered 401: Incorrect API key provided",
    "sk-learn is a library; task-skill matters",
    "the model's maximum context length is 8192 tokens (key: value)",
    "see https://example.com/docs?page=2 for the key facts",
    "email ops@example.com about the AKIA prefix",
    "eyJ alone is not a token",
]


@pytest.mark.parametrize(("text", "expected"), SHAPES)
def test_each_key_shape_is_redacted(text: str, expected: str) -> None:
    """Every documented key shape, userinfo and key-like query value becomes [redacted]."""
    assert redact(text) == expected


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_words_are_not_eaten(text: str) -> None:
    """Messages without a key (the words 'bearer', 'key', 'token', a plain URL) are kept."""
    assert redact(text) == text


def test_every_rule_is_named_and_replaces_with_the_marker() -> None:
    """Each rule has a name (the documented list) and its replacement holds [redacted]."""
    assert len({name for name, _, _ in RULES}) == len(RULES)
    assert all(REDACTED in replacement for _, _, replacement in RULES)


def test_configured_secrets_are_redacted_longest_first() -> None:
    """A configured value goes whole, also when another configured value is part of it."""
    text = "echo: hunter2-long and hunter2"
    assert redact(text, ["hunter2", "hunter2-long"]) == "echo: [redacted] and [redacted]"


def test_short_configured_values_are_not_secrets() -> None:
    """A placeholder key shorter than MIN_SECRET_CHARS (a server without auth) eats nothing."""
    assert MIN_SECRET_CHARS == 4
    assert redact("no answer from x", ["x", "no"]) == "no answer from x"


def test_a_secret_straddling_the_marker_does_not_come_back() -> None:
    """A secret re-formed around a marker put in its place is redacted again."""
    assert "d]xx" not in redact("d]xxxx", ["d]xx"])


def test_the_redactor_holds_its_secrets() -> None:
    """Redactor(secrets)(text) is redact(text, secrets); with_secrets adds more."""
    redactor = Redactor(("PASSWORD1",)).with_secrets(["other-secret"])
    assert redactor("PASSWORD1 other-secret") == "[redacted] [redacted]"
    assert redactor("nothing here") == "nothing here"


SECRET_CHARS = st.characters(codec="utf-8")


@settings(derandomize=True, max_examples=300, deadline=None)
@given(
    secret=st.text(SECRET_CHARS, min_size=MIN_SECRET_CHARS, max_size=40).filter(
        lambda s: s not in REDACTED
    ),
    before=st.text(SECRET_CHARS, max_size=60),
    after=st.text(SECRET_CHARS, max_size=60),
    others=st.lists(st.text(SECRET_CHARS, min_size=1, max_size=12), max_size=3),
)
def test_a_configured_secret_never_survives(
    secret: str, before: str, after: str, others: list[str]
) -> None:
    """A configured secret embedded anywhere in any text never survives redaction."""
    text = before + secret + after + secret
    assert secret not in redact(text, [*others, secret])
    assert secret not in Redactor((secret, *others))(text)


def test_shown_url_drops_userinfo_query_and_fragment() -> None:
    """A URL in a message keeps scheme, host, port and path; never user, password or query."""
    url = "http://svc:PASSWORD@vllm.internal:8000/v1/chat/completions?api_key=K3Y#frag"
    assert shown_url(url) == "http://vllm.internal:8000/v1/chat/completions"
    assert shown_url("https://api.openai.com/v1") == "https://api.openai.com/v1"


def test_shown_url_of_an_unreadable_url_is_redacted() -> None:
    """A URL urlsplit refuses is shown without its query and with its userinfo redacted."""
    assert shown_url("http://u:PASSWORD@[::1/v1?key=K") == "http://[redacted]@[::1/v1"


def _record(error: str) -> DeliberationRecord:
    evaluation = EvaluationRecord(evaluator="b", error=error)
    proposal = ProposalRecord(agent_id="a", content=f"answer with {KEY}", error=error,
                              evaluations=[evaluation])  # fmt: skip
    return DeliberationRecord(
        id="d1", agents=["a", "b"], created_at=0.0, error=error,
        rounds=[RoundRecord(number=1, proposals=[proposal])],
    )  # fmt: skip


def test_a_stored_records_failure_texts_are_redacted() -> None:
    """Every error field of a record, at any depth, is redacted; answers are not touched."""
    leaked = f"http: http://svc:PASSWORD@h/v1 answered 401: Incorrect API key provided: {KEY}"
    shown = redacted_fields(_record(leaked), Redactor(("PASSWORD",)))
    dumped = shown.model_dump_json()
    assert "PASSWORD" not in dumped
    assert dumped.count(KEY) == 1  # the answer's text, kept as the agent gave it
    proposal = shown.rounds[0].proposals[0]
    assert proposal.error == shown.error == proposal.evaluations[0].error
    assert proposal.error is not None
    assert "answered 401: Incorrect API key provided" in proposal.error


def test_a_clean_record_is_returned_as_it_is() -> None:
    """A record with nothing to redact is the same object (no copy on the read path)."""
    record = _record("timeout: no answer within 5 s")
    assert redacted_fields(record, Redactor()) is record
