"""The NATS store's options and names, and how nats-py errors become agentladder errors.

``nats://host:port[,host:port...]?replicas=1&rank_bucket=nsed_agent_ranks&prefix=agentladder``

- ``rank_bucket``: the KV bucket of rank stats (the specification's ``nsed_agent_ranks``).
- ``prefix``: names everything else: the KV buckets ``<prefix>_registrations`` and
  ``<prefix>_deliberations``, the stream ``<PREFIX>_ORACLE`` (upper case) on the subjects
  ``<prefix>.oracle.>``, and the rank update subjects ``<prefix>.ranks.updated.<agent_id>``.
- ``replicas``: the JetStream replicas of every bucket and stream this store creates.
- ``skill_queue=on``: a judgment's award carries its skill evidence, applied by the one
  leased applier (``store/nats/skillqueue.py``), not on the judgment's request path;
  ``skill_queue_max_msgs`` (the awards waiting for the applier before judgments are
  refused, default 100000) and ``skill_queue_lease_s`` (the applier's lease, 1 to 600 s,
  default 10) shape it; ``skill_queue_applier=apart`` (default ``serve``): ``serve`` runs
  no applier, ``agentladder skill apply`` processes do.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import nats.errors
import nats.js.errors
from nats.aio.client import Client

from agentladder.errors import AgentladderError, InvalidInput, StoreError, StoreUnavailable

__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_RANK_BUCKET",
    "MARKER_PREFIX",
    "NatsOptions",
    "QueueOptions",
    "claim_token",
    "kv_key_ok",
    "marker_key",
    "nats_errors",
    "parse_nats_url",
]

DEFAULT_RANK_BUCKET = "nsed_agent_ranks"
DEFAULT_PREFIX = "agentladder"
MARKER_PREFIX = "=applied="
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_KV_KEY = re.compile(r"[-/_=.A-Za-z0-9]{1,1024}")
_MAX_REPLICAS = 5
_QUEUE_OPTIONS = {
    "skill_queue",
    "skill_queue_max_msgs",
    "skill_queue_lease_s",
    "skill_queue_applier",
}


@dataclass(frozen=True, slots=True)
class QueueOptions:
    """The skill queue's shape (``skill_queue=on``; docs/storage-nats.md, "Skill queue")."""

    max_msgs: int = 100_000
    lease_s: float = 10.0
    in_serve: bool = True  # skill_queue_applier=serve; apart: ``agentladder skill apply``


@dataclass(frozen=True, slots=True)
class NatsOptions:
    """Where the store connects and how it names its buckets, stream and subjects."""

    servers: tuple[str, ...]
    url: str
    replicas: int = 1
    rank_bucket: str = DEFAULT_RANK_BUCKET
    prefix: str = DEFAULT_PREFIX
    skill_queue: QueueOptions | None = None  # None: skill evidence applied inline

    @property
    def appliers_bucket(self) -> str:
        """KV bucket of the skill appliers' shard leases and presence."""
        return f"{self.prefix}_appliers"

    @property
    def registrations_bucket(self) -> str:
        """KV bucket of registrations."""
        return f"{self.prefix}_registrations"

    @property
    def deliberations_bucket(self) -> str:
        """KV bucket of deliberation records."""
        return f"{self.prefix}_deliberations"

    @property
    def leases_bucket(self) -> str:
        """KV bucket of the service instances' leases."""
        return f"{self.prefix}_leases"

    @property
    def spend_bucket(self) -> str:
        """KV bucket of the gateway clients' spend (budgets)."""
        return f"{self.prefix}_spend"

    @property
    def checks_bucket(self) -> str:
        """KV bucket of the gateway's pending checks."""
        return f"{self.prefix}_checks"

    @property
    def skills_bucket(self) -> str:
        """KV bucket of the evidence model's log and states."""
        return f"{self.prefix}_skills"

    @property
    def oracle_stream(self) -> str:
        """The stream of Oracle events and idempotency claims."""
        return f"{self.prefix.upper()}_ORACLE"

    @property
    def oracle_subjects(self) -> str:
        """Every subject of the Oracle stream."""
        return f"{self.prefix}.oracle.>"

    @property
    def event_prefix(self) -> str:
        """``<prefix>.oracle.event.``: followed by an agent id, its event subject."""
        return f"{self.prefix}.oracle.event."

    def event_subject(self, agent_id: str) -> str:
        """The subject of one agent's events (its last message is its profile)."""
        return f"{self.event_prefix}{agent_id}"

    def claim_subject(self, agent_id: str, key: str) -> str:
        """The subject of the idempotency claim of one event key of one agent."""
        return f"{self.prefix}.oracle.key.{agent_id}.{claim_token(key)}"

    def rank_update_subject(self, agent_id: str) -> str:
        """Core NATS subject on which an agent's new stats are published after a commit."""
        return f"{self.prefix}.ranks.updated.{agent_id}"


def claim_token(key: str) -> str:
    """A subject-safe token for an event key: the first 40 hex digits of its SHA-256."""
    return hashlib.sha256(key.encode()).hexdigest()[:40]


def marker_key(marker: str) -> str:
    """The rank bucket key of a ``commit_stats`` marker: ``=applied=<token>``."""
    token = marker if _NAME.fullmatch(marker) else hashlib.sha256(marker.encode()).hexdigest()
    return f"{MARKER_PREFIX}{token}"


def kv_key_ok(key: str) -> bool:
    """Whether ``key`` is a valid KV key (``[-/_=.A-Za-z0-9]+``, no leading or trailing dot)."""
    return bool(_KV_KEY.fullmatch(key)) and not key.startswith(".") and not key.endswith(".")


def parse_nats_url(url: str) -> NatsOptions:
    """``NatsOptions`` from a ``nats://`` (or ``tls://``) URL; ``InvalidInput("store")`` if bad."""
    parts = urlsplit(url)
    hosts = [host for host in parts.netloc.split(",") if host]
    if parts.scheme not in ("nats", "tls") or not hosts or parts.path not in ("", "/"):
        raise InvalidInput("store", url, "must look like nats://host:port[,host:port...]")
    options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    unknown = set(options) - {"replicas", "rank_bucket", "prefix"} - _QUEUE_OPTIONS
    if unknown:
        raise InvalidInput("store", url, f"has unknown options {sorted(unknown)}")
    replicas_text = options.get("replicas", "1")
    if not replicas_text.isdigit() or not 1 <= int(replicas_text) <= _MAX_REPLICAS:
        raise InvalidInput("store", url, f"replicas must be 1 to {_MAX_REPLICAS}")
    rank_bucket = options.get("rank_bucket", DEFAULT_RANK_BUCKET)
    prefix = options.get("prefix", DEFAULT_PREFIX)
    for name, value in (("rank_bucket", rank_bucket), ("prefix", prefix)):
        if not _NAME.fullmatch(value):
            raise InvalidInput("store", url, f"{name} must be 1 to 64 of A-Z a-z 0-9 _ -")
    shown = ",".join(host.rpartition("@")[2] for host in hosts)
    query = f"?replicas={replicas_text}&rank_bucket={rank_bucket}&prefix={prefix}"
    queue = _queue_options(url, options)
    if queue is not None:
        query += (
            f"&skill_queue=on&skill_queue_max_msgs={queue.max_msgs}"
            f"&skill_queue_lease_s={queue.lease_s:g}"
            f"&skill_queue_applier={'serve' if queue.in_serve else 'apart'}"
        )
    return NatsOptions(
        servers=tuple(f"{parts.scheme}://{host}" for host in hosts),
        url=f"{parts.scheme}://{shown}{query}",
        replicas=int(replicas_text),
        rank_bucket=rank_bucket,
        prefix=prefix,
        skill_queue=queue,
    )


def _queue_options(url: str, options: dict[str, str]) -> QueueOptions | None:
    """The skill queue's options (None: ``skill_queue`` off, the default)."""
    switch = options.get("skill_queue", "off")
    if switch not in ("on", "off"):
        raise InvalidInput("store", url, "skill_queue must be on or off")
    if switch == "off":
        return None
    default = QueueOptions()

    def number(name: str, low: float, high: float, value: float) -> float:
        text = options.get(name)
        if text is None:
            return value
        try:
            found = float(text)
        except ValueError:
            found = low - 1
        if not low <= found <= high:
            raise InvalidInput("store", url, f"{name} must be a number from {low:g} to {high:g}")
        return found

    applier = options.get("skill_queue_applier", "serve")
    if applier not in ("serve", "apart"):
        raise InvalidInput("store", url, "skill_queue_applier must be serve or apart")
    return QueueOptions(
        in_serve=applier == "serve",
        max_msgs=int(number("skill_queue_max_msgs", 1, 10**9, default.max_msgs)),
        lease_s=number("skill_queue_lease_s", 1, 600, default.lease_s),
    )


_UNAVAILABLE = (
    nats.errors.TimeoutError,
    nats.errors.NoRespondersError,
    nats.errors.ConnectionClosedError,
    nats.errors.ConnectionDrainingError,
    nats.errors.ConnectionReconnectingError,
    nats.errors.StaleConnectionError,
    nats.errors.OutboundBufferLimitError,
    nats.errors.NoServersError,
    nats.js.errors.ServiceUnavailableError,
    nats.js.errors.NoStreamResponseError,  # a publish that no stream answered: down
    OSError,
)


@contextmanager
def nats_errors(what: str, client: Client | None = None) -> Iterator[None]:
    """Turn nats-py errors raised inside into ``StoreUnavailable`` or ``StoreError``.

    Unreachable, timed out, no responders (or no stream's answer to a publish), closed:
    ``StoreUnavailable``. Any other
    JetStream API error: ``StoreError`` with its code. agentladder's own errors pass.
    With ``client``: ``StoreUnavailable`` at once if it is not connected now.
    """
    if client is not None and not client.is_connected:
        raise StoreUnavailable(f"NATS {what}: not connected (reconnecting or closed)")
    try:
        yield
    except AgentladderError:
        raise
    except _UNAVAILABLE as error:
        raise StoreUnavailable(f"NATS {what}: {error!r}") from error
    except nats.js.errors.APIError as error:
        text = f"NATS {what}: JetStream error {error.err_code}: {error.description}"
        raise StoreError(text) from error
    except nats.errors.Error as error:
        raise StoreError(f"NATS {what}: {error!r}") from error
