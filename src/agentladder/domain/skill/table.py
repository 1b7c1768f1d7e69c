"""The observation table (``observations.Observations``) built evidence by evidence, in
any order, without holding the evidence: a page of events is read, added and dropped.

Each observation is kept as a compact row (integer ids for its pair, source, evaluator and
event; its value, kind and time) in numpy columns grown page by page; names (agents, task
types, judges) are interned once; an event's key is kept as its UTF-8 bytes in one buffer.
``build`` then gives exactly the table ``observations_of`` defines: rows in the order of
their events' keys (the events' own order within one), names sorted, each index its name's
position. What needs the whole log (an evaluator's model changes before a deliberation:
its source; the keys' order) is settled there, from the rows.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from agentladder.domain.skill.evidence import (
    AGGREGATE,
    DeliberationEvidence,
    Evidence,
    ModelChange,
    ScoreEvidence,
)
from agentladder.domain.skill.observations import (
    Index,
    Observations,
    agent_source,
    judge_source,
)

__all__ = ["TableBuilder", "key_ranks", "observations_of"]

Ints = npt.NDArray[np.int64]
PREFIX = 64
"""Bytes of each key sorted at once; keys equal that far are ordered by their whole bytes."""
_COLUMNS: dict[str, type[np.generic]] = {
    "pair": np.int32, "source": np.int32, "evaluator": np.int32, "event": np.int32,
    "grouped": np.bool_, "value": np.float64, "binary": np.bool_, "at": np.float64,
    "history": np.bool_,
}  # fmt: skip


def _utf8(text: str) -> bytes:
    """The key's bytes: their order is the order of the text's code points."""
    return text.encode("utf-8", "surrogatepass")


def key_ranks(buffer: bytes | bytearray, offsets: Ints) -> Ints:
    """Each key's position among the distinct keys sorted (equal keys share one): the keys
    are ``buffer[offsets[i]:offsets[i + 1]]``. Sorted by their first ``PREFIX`` bytes in
    numpy (memory: ``PREFIX`` bytes a key), then each run of equal prefixes by the whole
    bytes (a run holds keys longer than that, or ending in NUL bytes, which numpy's byte
    strings do not tell apart)."""
    count = len(offsets) - 1
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    width = max(1, min(PREFIX, int(lengths.max())))
    data = np.frombuffer(buffer, dtype=np.uint8)
    grid = np.zeros((count, width), dtype=np.uint8)
    for j in range(width):
        has = lengths > j
        grid[has, j] = data[starts[has] + j]
    prefix = grid.view(f"S{width}").ravel()
    del grid
    order = np.argsort(prefix, kind="stable")
    ordered = prefix[order]
    same = ordered[1:] == ordered[:-1]  # ties with the key before
    del ordered, prefix
    step = np.ones(count, dtype=np.int64)
    step[0] = 0
    step[1:][same] = 0
    tied = np.flatnonzero(same)  # position p ties with p - 1 (p = index + 1)
    if len(tied):
        run_starts = tied[np.r_[True, np.diff(tied) > 1]]
        run_ends = tied[np.r_[np.diff(tied) > 1, True]] + 2
        for first, end in zip(run_starts.tolist(), run_ends.tolist(), strict=True):
            members = order[first:end].tolist()
            whole = {m: buffer[int(offsets[m]) : int(offsets[m + 1])] for m in members}
            members.sort(key=whole.__getitem__)
            order[first:end] = members
            for p in range(first + 1, end):
                step[p] = 0 if whole[members[p - first]] == whole[members[p - first - 1]] else 1
    ranks = np.empty(count, dtype=np.int64)
    ranks[order] = np.cumsum(step)
    return ranks


class _Names:
    """Strings interned in the order they are first seen."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.names: list[Any] = []

    def id(self, name: Any) -> int:
        found = self.ids.get(name)
        if found is None:
            found = self.ids[name] = len(self.names)
            self.names.append(name)
        return found


class TableBuilder:
    """Rows of observations gathered page by page; ``build`` gives the table."""

    def __init__(self) -> None:
        self._agents = _Names()
        self._types = _Names()
        self._pairs = _Names()  # (agent id, type id)
        self._sources = _Names()  # judges and the aggregate: sources that are no agent
        self._pages: dict[str, list[npt.NDArray[Any]]] = {c: [] for c in _COLUMNS}
        self._keys = bytearray()
        self._offsets = array("q", [0])
        self._changes: dict[str, list[float]] = {}
        self._history = False  # the event being added is evidence of past work
        self.events = 0
        """How many events were added (a model change and an event without rows count)."""

    def add(self, evidence: Iterable[Evidence]) -> TableBuilder:
        """Add one page of evidence (each event once: the log's events)."""
        rows: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
        for item in evidence:
            self.events += 1
            if isinstance(item, ModelChange):
                self._changes.setdefault(item.agent_id, []).append(item.at)
                continue
            before = len(rows["pair"])
            event = len(self._offsets) - 1
            self._history = isinstance(item, ScoreEvidence) and _past(item)
            if isinstance(item, DeliberationEvidence):
                self._deliberation(item, event, rows)
            elif isinstance(item, ScoreEvidence):
                if item.score is not None:
                    source = self._sources.id(judge_source(item.judge))
                    self._row(rows, item.agent_id, item.task_type, source, -1, event, False,
                              item.score, False, item.at)  # fmt: skip
                else:
                    self._row(rows, item.agent_id, item.task_type, -1, -1, event, False,
                              1.0 if item.success else 0.0, True, item.at)  # fmt: skip
            else:
                self._row(rows, item.agent_id, item.task_type, -1, -1, event, False,
                          1.0 if item.passed else 0.0, True, item.at)  # fmt: skip
            if len(rows["pair"]) > before:  # only events with rows are the table's
                self._keys += _utf8(item.key)
                self._offsets.append(len(self._keys))
        if rows["pair"]:
            for column, dtype in _COLUMNS.items():
                self._pages[column].append(np.array(rows[column], dtype=dtype))
        return self

    def _deliberation(
        self, item: DeliberationEvidence, event: int, rows: dict[str, list[Any]]
    ) -> None:
        for ev in item.evaluations:
            evaluator = self._agents.id(ev.evaluator)
            self._row(rows, ev.author, item.task_type, -1, evaluator, event, True, ev.score,
                      False, item.at)  # fmt: skip
        if item.aggregated:
            source = self._sources.id(AGGREGATE)
            for reported in item.aggregated:
                self._row(rows, reported.author, item.task_type, source, -1, event, True,
                          reported.score, False, item.at)  # fmt: skip

    def _row(self, rows: dict[str, list[Any]], agent: str, task_type: str, source: int,
             evaluator: int, event: int, grouped: bool, value: float, binary: bool,
             at: float) -> None:  # fmt: skip
        pair = self._pairs.id((self._agents.id(agent), self._types.id(task_type)))
        rows["pair"].append(pair)
        rows["source"].append(source)
        rows["evaluator"].append(evaluator)
        rows["event"].append(event)
        rows["grouped"].append(grouped)
        rows["value"].append(value)
        rows["binary"].append(binary)
        rows["at"].append(at)
        rows["history"].append(self._history)

    def _column(self, name: str) -> npt.NDArray[Any]:
        """One column's pages joined (and dropped)."""
        pages = self._pages[name]
        joined = np.concatenate(pages) if pages else np.zeros(0, dtype=_COLUMNS[name])
        pages.clear()
        return joined

    def build(self) -> Observations:
        """The table of every row added, as ``observations_of`` orders and indexes it; the
        builder's rows are used up."""
        changes = {agent: sorted(times) for agent, times in self._changes.items()}
        ranks = key_ranks(self._keys, np.frombuffer(self._offsets, dtype=np.int64))
        self._keys, self._offsets = bytearray(), array("q", [0])
        event = ranks[self._column("event")].astype(np.int32)
        order = np.argsort(event, kind="stable")
        event = event[order]
        grouped = self._column("grouped")[order]
        at = self._column("at")[order]
        names = self._agents.names
        pair_names = [(names[a], self._types.names[t]) for a, t in self._pairs.names]
        pairs = sorted(pair_names)
        pair_at = {p: i for i, p in enumerate(pairs)}
        pair_map = np.array([pair_at[p] for p in pair_names], dtype=np.int32)
        pair = pair_map[self._column("pair")[order]] if len(order) else np.zeros(0, np.int32)
        sources, source = self._sources_of(
            self._column("source")[order], self._column("evaluator")[order], at, changes
        )
        group_keys = np.unique(event[grouped])
        group = np.full(len(event), -1, dtype=np.int32)
        group[grouped] = np.searchsorted(group_keys, event[grouped])
        return Observations(
            pairs=pairs,
            sources=sources,
            group_count=len(group_keys),
            event_count=int(ranks.max()) + 1 if len(ranks) else 0,
            pair=pair,
            source=source,
            group=group,
            event=event,
            value=self._column("value")[order],
            binary=self._column("binary")[order],
            at=at,
            changes=changes,
            history=self._column("history")[order],
        )

    def _sources_of(
        self, fixed: npt.NDArray[Any], evaluator: npt.NDArray[Any], at: npt.NDArray[Any],
        changes: dict[str, list[float]],
    ) -> tuple[list[str], Index]:  # fmt: skip
        """Each row's source index among the sorted source names: a judge or the aggregate
        as added; an evaluator in the model it ran at the deliberation's time."""
        agents = self._agents.names
        epoch = np.zeros(len(evaluator), dtype=np.int64)
        rows = np.flatnonzero(evaluator >= 0)
        by_agent = rows[np.argsort(evaluator[rows], kind="stable")]
        bounds = np.flatnonzero(np.diff(evaluator[by_agent])) + 1
        for part in np.split(by_agent, bounds) if len(by_agent) else []:
            times = changes.get(agents[int(evaluator[part[0]])])
            if times:
                epoch[part] = np.searchsorted(np.array(times), at[part], side="right")
        pairs = np.stack([evaluator[rows].astype(np.int64), epoch[rows]], axis=1)
        combos, inverse = (np.unique(pairs, axis=0, return_inverse=True) if len(rows)
                           else (np.zeros((0, 2), np.int64), np.zeros(0, np.int64)))  # fmt: skip
        combo_names = [agent_source(agents[int(a)], int(e)) for a, e in combos]
        fixed_names = self._sources.names
        every = sorted({*combo_names, *fixed_names})
        index = {n: i for i, n in enumerate(every)}
        out = np.full(len(evaluator), -1, dtype=np.int32)
        fixed_map = np.array([index[n] for n in fixed_names], dtype=np.int32)
        has = fixed >= 0
        out[has] = fixed_map[fixed[has]]
        combo_map = np.array([index[n] for n in combo_names], dtype=np.int32)
        if len(rows):
            out[rows] = combo_map[inverse.ravel()]
        return every, out


def _past(item: ScoreEvidence) -> bool:
    """Whether a judgment is evidence of past work: a deferred one, but a caller's
    feedback (deferred too, but of an answer just given)."""
    return item.deferred and not item.judge.startswith("feedback:")


def observations_of(evidence: Iterable[Evidence]) -> Observations:
    """Every observation of the evidence, in the canonical order (``observations.py``)."""
    return TableBuilder().add(evidence).build()
