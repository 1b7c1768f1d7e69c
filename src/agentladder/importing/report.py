"""What ``agentladder import`` prints at its end: the summary's lines, for standard output
and standard error, and its exit status (docs/import.md, "The summary")."""

from __future__ import annotations

import json

from agentladder.importing.items import LINE_ERROR, MODEL_CALL, SAMPLE_ERROR
from agentladder.importing.run import Summary

__all__ = ["FITTED", "exit_status", "report_lines", "skipped_line"]

FITTED = (
    "the skill estimates include this import: a server on this store answers with them"
    " from its next request"
)
"""The note of an import whose fit committed (a server notices a new fit in the store at
its next routing: docs/routing.md, "Across instances")."""

_SKIPPED = {
    SAMPLE_ERROR: (
        "sample", "the evaluation marked {them} {errors}; --include-errors to count {them} as"
        " {failures}",
    ),
    MODEL_CALL: (
        "sample", "a model call of {each} failed (refused by the provider or a gateway: a key,"
        " a quota, a budget, an unknown model); --include-errors to import {them} as scored",
    ),
    LINE_ERROR: (
        "line", "{its} error says the task failed for a reason that is not the agent's;"
        " --include-errors to count {them} as {failures}",
    ),
}  # fmt: skip
"""Per reason: the noun and the text of the summary's line."""
_ONE = {"them": "it", "errors": "an error", "failures": "a failure", "each": "it", "its": "its"}
_MANY = {"them": "them", "errors": "errors", "failures": "failures", "each": "each",
         "its": "their"}  # fmt: skip


def skipped_line(reason: str, count: int) -> str:
    """The summary's line for ``count`` entries skipped for ``reason``:
    ``N samples skipped: the evaluation marked them errors; --include-errors to count
    them as failures``."""
    noun, text = _SKIPPED[reason]
    words = _ONE if count == 1 else _MANY
    return f"{count} {noun if count == 1 else noun + 's'} skipped: {text.format(**words)}"


def report_lines(summary: Summary, as_json: bool) -> tuple[list[str], list[str]]:
    """(standard output's lines, standard error's): the JSON summary alone with
    ``as_json``; else each problem on standard error, the new agents, the counts and one
    line per note on standard output."""
    if as_json:
        return [json.dumps(summary.model_dump(mode="json"), indent=2)], []
    errors = [f"{p.where}: {p.status.value}: {p.error}" for p in summary.problems]
    if summary.problems_left_out:
        errors.append(f"... and {summary.problems_left_out} more problems")
    out = []
    if summary.new_agents:
        more = summary.new_agents_left_out
        out.append(
            f"new agents ({len(summary.new_agents) + more}): {', '.join(summary.new_agents)}"
            + (f" and {more} more" if more else "")
        )
    out.append(
        f"imported {summary.imported}, duplicate {summary.duplicate}, conflicting "
        f"{summary.conflicting}, refused {summary.refused} in {summary.seconds:.1f} s "
        f"({summary.per_second:,.0f}/s)"
    )
    out += [skipped_line(reason, count) for reason, count in summary.skipped.items()]
    if summary.model_versions:
        out.append(
            f"model versions recorded: {summary.model_versions} (each a new model in the"
            " skill estimates from its first evidence)"
        )
    if summary.through_gateway:
        out.append(
            f"answered through the gateway: {_samples(summary.through_gateway)}, each a"
            " judgment of the agent that answered its last model call (its served record)"
        )
    if summary.gateway_judged:
        out.append(
            f"judged by the gateway already: {_samples(summary.gateway_judged)} (its check"
            " of the same answer), counted as duplicates"
        )
    if summary.unfound:
        shown = ", ".join(summary.unfound_where[:3])
        more = summary.unfound - min(3, len(summary.unfound_where))
        errors.append(
            f"warning: {_samples(summary.unfound)} of routed runs name no answer this store's"
            " gateway records hold (a log from elsewhere, another store, or records past"
            " gateway.feedback_days): imported under the agent their model name makes ("
            + shown
            + (f" and {more} more" if more > 0 else "")
            + ")"
        )
    out += summary.notes
    return out, errors


def _samples(count: int) -> str:
    return f"{count} sample" if count == 1 else f"{count} samples"


def exit_status(summary: Summary) -> int:
    """1 when an item was refused or conflicted (a file or folder that yielded nothing is
    a refused item), else 0; skipped entries and notes leave it 0."""
    return 1 if summary.conflicting or summary.refused else 0
