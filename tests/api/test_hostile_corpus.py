"""The hostile-input corpus: for every write endpoint, every kind of bad request.

(The table and its helpers; ``test_hostile.py`` and ``test_hostile_served.py`` run it.)

Each ``Case`` is one request (a JSON body, or raw bytes when JSON cannot say it: NaN,
Infinity, 1e400, not JSON at all) with the status, error code and field it must get.
``corpus()`` builds the table from one valid base body per endpoint and the kinds of
damage below; ``snapshot()`` reads everything the store holds, to prove nothing is stored.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agentladder.api.app import create_app
from agentladder.config import Settings, parse_settings
from agentladder.services.container import Services
from tests.api.conftest import CONFIG

__all__ = [
    "ADMIN_WRITES",
    "BODILESS_WRITES",
    "ENDPOINTS",
    "HOSTILE_NAMES",
    "Case",
    "Endpoint",
    "bodiless_cases",
    "corpus",
    "snapshot",
]

Path = tuple[str | int, ...]
_MARK = "\u0000hostile\u0000"


@dataclass(frozen=True)
class Case:
    """One bad request and what it must get."""

    kind: str
    path: str
    body: bytes
    status: int
    code: str
    field: str | None = None
    content_type: str = "application/json"

    @property
    def label(self) -> str:
        """A short name for failure messages."""
        return f"{self.kind} {self.path} {self.body[:80]!r}"


@dataclass(frozen=True)
class Endpoint:
    """A write endpoint: a valid body and where its fields of each type are."""

    path: str
    base: dict[str, Any]
    required: tuple[str, ...]
    strings: tuple[Path, ...]
    numbers: tuple[Path, ...]  # non-negative numbers
    integers: tuple[Path, ...] = ()
    bools: tuple[Path, ...] = ()
    lists: tuple[Path, ...] = ()
    name: Path | None = None  # the agent-name field (a path to a value)
    name_key: Path | None = None  # or the object whose keys are agent names
    extra_refused: bool = True
    long_strings: tuple[tuple[Path, int], ...] = ()  # a field and its maximum length
    extras: tuple[Case, ...] = field(default_factory=tuple)
    url: str | None = None  # where the cases are sent, for a path with a parameter

    @property
    def target(self) -> str:
        """Where the cases are sent: ``url``, else ``path``."""
        return self.url or self.path


def _dotted(path: Path) -> str:
    return ".".join(str(p) for p in path)


def _with(base: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    body = copy.deepcopy(base)
    target: Any = body
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return body


def _without(base: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in base.items() if k != key}


def _raw(base: dict[str, Any], path: Path, literal: str) -> bytes:
    """The base body with ``literal`` (not JSON-encodable, such as NaN) at ``path``."""
    text = json.dumps(_with(base, path, _MARK))
    return text.replace(json.dumps(_MARK), literal).encode()


def _encode(body: Any) -> bytes:
    return json.dumps(body).encode()


HOSTILE_NAMES: tuple[str, ...] = (
    "../x", "..", ".", "a/b", "/etc/passwd", "a\\b", "a*", "*", "a>b", ">", "a b", " a",
    "a\tb", "a\nb", "a\u0000b", ".a", "a.", "a..b", "", "\u0430dmin", "\uff53\uff49\uff4d",
    "sim\u200ba", "x" * 65, "x" * 10_000, "\ud800", "caf\u00e9",
)  # fmt: skip
"""Names refused everywhere: path traversal, NATS subject and key characters (``*``,
``>``, whitespace, empty tokens around ``.``), control characters, confusables (a
Cyrillic a, full-width letters, a zero-width space), too long, empty, a lone surrogate."""

WRONG_TYPES: dict[str, tuple[Any, ...]] = {
    "string": (12345, 1.5, True, ["x"], {"$ne": 1}),
    "number": ("high", "true", "", [1], {"$gt": 0}),
    "integer": (1.5, "many", [1], {"$gt": 0}),
    "bool": ("maybe", 2, [True], {"a": 1}),
    "list": ("not-a-list", 7, True),
}
NON_FINITE = ("NaN", "Infinity", "-Infinity", "1e400", "-1e400")
HUGE: tuple[Any, ...] = (10**30, -(10**30), 2**53 + 1, 1e308, -1e308, 1.7976931348623157e308)
NEGATIVE: tuple[Any, ...] = (-1, -0.5, -(2**53))


def _field_cases(e: Endpoint) -> Iterator[Case]:
    def bad(kind: str, body: dict[str, Any] | bytes, where: str, status: int = 422) -> Case:
        raw = body if isinstance(body, bytes) else _encode(body)
        return Case(kind, e.target, raw, status, "invalid_input", where)

    typed = (
        ("string", e.strings), ("number", e.numbers), ("integer", e.integers),
        ("bool", e.bools), ("list", e.lists),
    )  # fmt: skip
    for kind, paths in typed:
        for path in paths:
            for value in WRONG_TYPES[kind]:
                yield bad(f"wrong type ({kind})", _with(e.base, path, value), _dotted(path))
    for key in e.required:
        yield bad("missing field", _without(e.base, key), key)
        yield bad("null", {**e.base, key: None}, key)
    yield bad("missing fields", {}, e.required[0])
    numeric = e.numbers + e.integers or e.strings
    for path in numeric:
        for literal in NON_FINITE:
            yield bad("NaN or infinity", _raw(e.base, path, literal), _dotted(path))
        for value in HUGE:
            yield bad("huge number", _with(e.base, path, value), _dotted(path))
    for path in e.numbers + e.integers:
        for value in NEGATIVE:
            yield bad("negative", _with(e.base, path, value), _dotted(path))
    for path, longest in e.long_strings:
        yield bad("too long", _with(e.base, path, "x" * (longest + 1)), _dotted(path))
    if e.extra_refused:
        for extra in ("xp", "rank", "level", "__proto__"):
            yield bad("unknown field", {**e.base, extra: 1}, extra)


def _name_cases(e: Endpoint) -> Iterator[Case]:
    for name in HOSTILE_NAMES:
        if e.name is not None:
            body = _with(e.base, e.name, name)
            where = _dotted(e.name)
            yield Case("hostile name", e.target, _encode(body), 422, "invalid_input", where)
        if e.name_key is not None:
            holder = copy.deepcopy(e.base)
            target: Any = holder
            for part in e.name_key:
                target = target[part]
            first = next(iter(target))
            target[name] = target.pop(first)
            prefix = _dotted(e.name_key)
            yield Case("hostile name", e.target, _encode(holder), 422, "invalid_input", prefix)


def _body_cases(e: Endpoint) -> Iterator[Case]:
    def case(kind: str, raw: bytes, status: int, code: str, where: str | None = None,
             content_type: str = "application/json") -> Case:  # fmt: skip
        return Case(kind, e.target, raw, status, code, where, content_type)

    yield case("not JSON", b"{", 400, "bad_request")
    yield case("not JSON", b'{"a": 1,}', 400, "bad_request")
    yield case("not JSON", b"\x00\x01\x02", 400, "bad_request")
    yield case("invalid UTF-8", b'{"x": "\xff\xfe"}', 400, "bad_request")
    yield case("invalid UTF-8", _encode(e.base)[:-1] + b', "x": "\xc3\x28"}', 400, "bad_request")
    for raw in (b"[]", b"null", b'"x"', b"42", b"true", b"[" + _encode(e.base) + b"]"):
        yield case("not an object", raw, 422, "invalid_input", "body")
    yield case("empty body", b"", 422, "invalid_input", "body")
    yield case("wrong content type", _encode(e.base), 415, "unsupported_media_type", None,
               "text/plain")  # fmt: skip
    yield case("form body", b"a=1&b=2", 415, "unsupported_media_type", None,
               "application/x-www-form-urlencoded")  # fmt: skip
    deep = json.dumps(e.base)[:-1] + ', "deep": ' + "[" * 100 + "]" * 100 + "}"
    yield case("deeply nested (100)", deep.encode(), 400, "bad_request")
    yield case("deeply nested (100,000)", b"[" * 100_000, 400, "bad_request")
    yield case("deeply nested (100,000)", b'{"a":' * 100_000, 400, "bad_request")
    escaped = json.dumps(e.base)[:-1] + ', "note": "\\udc00"}'
    yield case("lone surrogate", escaped.encode(), 422, "invalid_input", "note")


def _corpus_of(e: Endpoint) -> list[Case]:
    return [*_field_cases(e), *_name_cases(e), *_body_cases(e), *e.extras]


def _judgment_extras() -> tuple[Case, ...]:
    base = {"agent_id": "sim_a", "contract_id": "seed-1", "score": 2.0}
    return (
        Case("conflict", "/oracle/judgments", _encode(base), 409, "conflict"),
        Case("control characters", "/oracle/judgments",
             _encode({**base, "contract_id": "c\u0000"}), 422, "invalid_input", "contract_id"),
        Case("too long", "/oracle/judgments",
             _encode({**base, "contract_id": "c", "output": "o" * 1_000_001}), 422,
             "invalid_input", "output"),
    )  # fmt: skip


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "/agents/heartbeat",
        {"name": "sim_a", "description": "an agent", "provider_id": "sim",
         "capability_tags": ["audit"], "input_price_per_mtok": 2.5,
         "output_price_per_mtok": 10.0},
        required=("name",), strings=(("description",), ("provider_id",)),
        numbers=(("input_price_per_mtok",), ("output_price_per_mtok",)),
        lists=(("capability_tags",),), name=("name",), extra_refused=False,
        extras=tuple(
            Case("server-owned field", "/agents/heartbeat", _encode({"name": "sim_a", **owned}),
                 422, "server_owned_field")
            for owned in ({"rank": 9}, {"xp": 10_000}, {"level": "expert"},
                          {"stats": {"rank": 3}}, {"avg_score": 10}, {"rank": None})
        ),
    ),
    Endpoint(
        "/deliberation",
        {"user_query": "Which controls matter most?", "agent_names": ["sim_a", "sim_b"],
         "min_agent_rank": 0, "scope": "quick", "task_type": "audit"},
        required=("user_query", "agent_names"),
        strings=(("user_query",), ("scope",), ("task_type",)), numbers=(),
        integers=(("min_agent_rank",),), lists=(("agent_names",),), name=("agent_names", 0),
        long_strings=((("user_query",), 32 * 1024),),
        extras=(
            Case("unknown agents", "/deliberation",
                 _encode({"user_query": "q", "agent_names": ["ghost_1", "ghost_2"]}), 422,
                 "invalid_input", "agent_names"),
            Case("one agent", "/deliberation",
                 _encode({"user_query": "q", "agent_names": ["sim_a"]}), 422, "invalid_input",
                 "agent_names"),
            Case("the same agent twice", "/deliberation",
                 _encode({"user_query": "q", "agent_names": ["sim_a", "sim_a"]}), 422,
                 "invalid_input", "agent_names"),
            Case("blank query", "/deliberation",
                 _encode({"user_query": "   ", "agent_names": ["sim_a", "sim_b"]}), 422,
                 "invalid_input", "user_query"),
            Case("agent_names and select", "/deliberation",
                 _encode({"user_query": "q", "agent_names": ["sim_a", "sim_b"],
                          "select": {"count": 2}}), 422, "invalid_input", "agent_names"),
            Case("select of one agent", "/deliberation",
                 _encode({"user_query": "q", "select": {"count": 1}}), 422, "invalid_input",
                 "select.count"),
            Case("select of more agents than qualify", "/deliberation",
                 _encode({"user_query": "q", "select": {"count": 60}}), 400,
                 "too_few_agents"),
        ),
    ),
    Endpoint(
        "/route",
        {"count": 2, "task_type": "audit", "strategy": "cheapest_above", "quality_floor": 1.0,
         "max_cost_per_round": 1.0, "tags": ["audit"], "min_agent_rank": 0},
        required=("count",), strings=(("task_type",), ("strategy",)),
        numbers=(("quality_floor",), ("max_cost_per_round",)),
        integers=(("count",), ("min_agent_rank",)), lists=(("tags",),),
        extras=(
            Case("too many agents", "/route", _encode({"count": 60}), 400, "too_few_agents"),
            Case("unknown strategy", "/route", _encode({"count": 2, "strategy": "luck"}), 422,
                 "invalid_input", "strategy"),
            Case("cheapest_above without a floor", "/route",
                 _encode({"count": 2, "strategy": "cheapest_above"}), 422, "invalid_input"),
        ),
    ),
    Endpoint(
        "/deliberations/results",
        {"deliberation_id": "ext-1", "task_type": "audit",
         "rounds": [{"agents": {"sim_a": {"aggregated_score": 9.0, "latency_ms": 120.0},
                                "sim_b": {"aggregated_score": 7.0, "latency_ms": 80.0}}}]},
        required=("deliberation_id", "rounds"),
        strings=(("deliberation_id",), ("task_type",)),
        numbers=(("rounds", 0, "agents", "sim_a", "aggregated_score"),
                 ("rounds", 0, "agents", "sim_a", "latency_ms")),
        lists=(("rounds",),), name_key=("rounds", 0, "agents"),
        extras=(
            Case("score over 10", "/deliberations/results",
                 _encode({"deliberation_id": "e2",
                          "rounds": [{"agents": {"sim_a": {"aggregated_score": 10.5}}}]}),
                 422, "invalid_input", "rounds.0.agents.sim_a.aggregated_score"),
            Case("path in the id", "/deliberations/results",
                 _encode({"deliberation_id": "../e2",
                          "rounds": [{"agents": {"sim_a": {"aggregated_score": 1}}}]}),
                 422, "invalid_input", "deliberation_id"),
            Case("conflict", "/deliberations/results",
                 _encode({"deliberation_id": "seed-1",
                          "rounds": [{"agents": {"sim_a": {"aggregated_score": 1.0}}}]}),
                 409, "conflict"),
            Case("no rounds", "/deliberations/results",
                 _encode({"deliberation_id": "e3", "rounds": []}), 422, "invalid_input",
                 "rounds"),
        ),
    ),
    Endpoint(
        "/oracle/judgments",
        {"agent_id": "sim_a", "contract_id": "c-1", "task_type": "audit", "score": 8.5,
         "retries": 0, "duration_ms": 500.0, "cost": 0.01, "budget": 0.05, "success": True},
        required=("agent_id", "contract_id"),
        strings=(("contract_id",), ("task_type",), ("provider",)),
        numbers=(("score",), ("duration_ms",), ("cost",), ("budget",)),
        integers=(("retries",),), bools=(("success",),), name=("agent_id",),
        long_strings=((("contract_id",), 256), (("provider",), 128)),
        extras=_judgment_extras(),
    ),
    Endpoint(
        "/oracle/judgments/batch",
        {"judgments": [{"agent_id": "sim_a", "contract_id": "c-1", "task_type": "audit",
                        "score": 8.5, "retries": 0, "duration_ms": 500.0, "cost": 0.01,
                        "success": True}]},
        required=("judgments",),
        strings=(("judgments", 0, "contract_id"), ("judgments", 0, "task_type")),
        numbers=(("judgments", 0, "score"), ("judgments", 0, "duration_ms"),
                 ("judgments", 0, "cost")),
        integers=(("judgments", 0, "retries"),), bools=(("judgments", 0, "success"),),
        lists=(("judgments",),), name=("judgments", 0, "agent_id"),
        long_strings=((("judgments", 0, "contract_id"), 256),),
    ),
    Endpoint(
        "/agents/{agent_id}/calls",
        {"latency_ms": 120.0, "outcome": "ok", "cost_usd": 0.01, "input_tokens": 30,
         "output_tokens": 12, "error": "none", "retry_after_s": 1.0},
        required=("latency_ms", "outcome"), strings=(("outcome",), ("error",)),
        numbers=(("latency_ms",), ("cost_usd",), ("retry_after_s",)),
        integers=(("input_tokens",), ("output_tokens",)),
        long_strings=((("error",), 2000),), url="/agents/sim_a/calls",
        extras=(
            Case("unknown agent", "/agents/ghost/calls",
                 _encode({"latency_ms": 1, "outcome": "ok"}), 404, "not_found"),
            Case("unknown outcome", "/agents/sim_a/calls",
                 _encode({"latency_ms": 1, "outcome": "meh"}), 422, "invalid_input",
                 "outcome"),
        ),
    ),
    Endpoint(
        "/oracle/sentinel/check",
        {"agent_id": "sim_a", "task_type": "audit", "force": False},
        required=("agent_id",), strings=(("task_type",),), numbers=(),
        bools=(("force",),), name=("agent_id",),
    ),
    Endpoint(
        "/oracle/validations",
        {"agent_id": "sim_a", "contract_id": "seed-1", "passed": False, "notes": "wrong"},
        required=("agent_id", "contract_id", "passed"),
        strings=(("contract_id",), ("notes",)), numbers=(), bools=(("passed",),),
        name=("agent_id",), long_strings=((("notes",), 10_000), (("contract_id",), 256)),
        extras=(
            Case("unknown agent", "/oracle/validations",
                 _encode({"agent_id": "ghost", "contract_id": "seed-1", "passed": False}),
                 404, "not_found"),
            Case("unknown contract", "/oracle/validations",
                 _encode({"agent_id": "sim_a", "contract_id": "nope", "passed": False}),
                 404, "not_found"),
        ),
    ),
    Endpoint(
        "/agents/tasks/answers",
        {"agent_id": "sim_a", "task_id": "0" * 32, "answer": {"content": "an answer"}},
        required=("agent_id", "task_id"), strings=(("task_id",),), numbers=(),
        name=("agent_id",),
        extras=(
            Case("too long", "/agents/tasks/answers",
                 _encode({"agent_id": "sim_a", "task_id": "0" * 32,
                          "error": {"kind": "timeout", "message": "m" * 10_001}}), 422,
                 "invalid_input", "error.message"),
            Case("unknown task", "/agents/tasks/answers",
                 _encode({"agent_id": "sim_a", "task_id": "0" * 32, "answer": {}}), 404,
                 "not_found"),
            Case("answer and error", "/agents/tasks/answers",
                 _encode({"agent_id": "sim_a", "task_id": "0" * 32, "answer": {},
                          "error": {"kind": "timeout"}}), 422, "invalid_input"),
            Case("neither answer nor error", "/agents/tasks/answers",
                 _encode({"agent_id": "sim_a", "task_id": "0" * 32}), 422, "invalid_input"),
            Case("not a task id", "/agents/tasks/answers",
                 _encode({"agent_id": "sim_a", "task_id": "../x", "answer": {}}), 422,
                 "invalid_input", "task_id"),
        ),
    ),
)  # fmt: skip
"""The admin token is used for the heartbeat and the task answers (an agent's own writes,
which an orchestrator token may not make), the orchestrator's for the rest."""

ADMIN_WRITES = frozenset({"/agents/heartbeat", "/agents/tasks/answers"})

BODILESS_WRITES = frozenset({"/skills/fit"})
"""Writes that take no body (an admin's): any body but none or ``{}`` is refused."""


def bodiless_cases(path: str) -> list[Case]:
    """Every bad body of a write that takes none."""
    cases = [
        Case("a body", path, raw, 422, "invalid_input", "body")
        for raw in (b'{"force": true}', b"[]", b"null", b'"x"', b"42", b"[{}]")
    ]
    cases.append(Case("not JSON", path, b"{", 422, "invalid_input", "body"))
    cases.append(Case("a key twice", path, b'{"a": 1, "a": 2}', 400, "bad_request"))
    cases.append(Case("invalid UTF-8", path, b'{"x": "\xff"}', 422, "invalid_input", "body"))
    cases.append(Case("wrong content type", path, b"{}", 415, "unsupported_media_type", None,
                      "text/plain"))  # fmt: skip
    return cases


def corpus(endpoint: Endpoint) -> list[Case]:
    """Every bad request of ``endpoint``."""
    return _corpus_of(endpoint)


Snapshot = dict[str, Any]


async def snapshot(services: Services, *, keep_times: bool = True) -> Snapshot:
    """Everything the store holds: registrations, stats, profiles, events, ledger lines,
    deliberations (``keep_times=False`` leaves out heartbeat times, which a served
    instance's own heartbeats move)."""
    store = services.store
    registrations = [r.model_dump(mode="json") for r in await store.list_registrations()]
    if not keep_times:
        for registration in registrations:
            registration.pop("last_seen", None)
    stats = {k: (v.revision, v.value.model_dump(mode="json"))
             for k, v in (await store.list_stats()).items()}  # fmt: skip
    profiles = [p.model_dump(mode="json") for p in await store.list_profiles()]
    agents = sorted(
        {r["config"]["name"] for r in registrations} | set(stats) | {p["id"] for p in profiles}
        | {"sim_a", "sim_b", "sim_c", "ghost"}
    )  # fmt: skip
    return {
        "registrations": registrations,
        "stats": stats,
        "profiles": profiles,
        "events": {a: [e.model_dump(mode="json") for e in await store.events(a)] for a in agents},
        "ledger": {
            a: [e.model_dump(mode="json") for e in await store.ledger(a, limit=1000)]
            for a in agents
        },
        "deliberations": [
            d.model_dump(mode="json") for d in await store.list_deliberations(limit=1000)
        ],
    }


def check_response(case: Case, status: int, body: Any, size: int) -> list[str]:
    """What is wrong with a response to ``case`` (empty: nothing)."""
    problems = []
    if status != case.status:
        problems.append(f"status {status}, wanted {case.status}")
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or set(body) != {"error"}:
        return [*problems, f"not the error shape: {body!r:.200}"]
    if not isinstance(error.get("code"), str) or not isinstance(error.get("message"), str):
        problems.append(f"no code or message: {error!r:.200}")
    if error.get("code") != case.code:
        problems.append(f"code {error.get('code')!r}, wanted {case.code!r}")
    if case.field is not None:
        named = error.get("field")
        if not isinstance(named, str) or not (
            named == case.field or named.startswith(case.field + ".")
        ):
            problems.append(f"field {named!r}, wanted {case.field!r}")
    if size > 4096:
        problems.append(f"an error body of {size} bytes")
    return problems


@dataclass
class NoServices:
    """Enough of ``Services`` for an app whose OpenAPI document only is read."""

    settings: Settings


def test_the_corpus_covers_every_write_endpoint() -> None:
    """Every POST, PUT, PATCH and DELETE route of the API is in the corpus, with every kind."""
    app = create_app(NoServices(parse_settings(CONFIG)))  # type: ignore[arg-type]
    writes = {
        path
        for path, item in app.openapi()["paths"].items()
        for method in item
        if method in ("post", "put", "patch", "delete")
    }
    assert writes == {e.path for e in ENDPOINTS} | BODILESS_WRITES
    for endpoint in ENDPOINTS:
        kinds = {case.kind for case in corpus(endpoint)}
        expected = {
            "wrong type (string)", "missing field", "null", "NaN or infinity", "huge number",
            "hostile name", "not JSON", "invalid UTF-8", "not an object", "empty body",
            "wrong content type", "deeply nested (100)", "deeply nested (100,000)",
            "lone surrogate",
        }  # fmt: skip
        if endpoint.name is None and endpoint.name_key is None:  # /route names no agent
            expected.discard("hostile name")
        assert expected <= kinds, (endpoint.path, expected - kinds)
