"""What ``agentladder import`` prints at its end: the summary's lines, for standard output
and standard error, and its exit status (docs/import.md, "The summary")."""

from __future__ import annotations

import json

from agentladder.importing.run import Summary

__all__ = ["exit_status", "report_lines"]


def report_lines(summary: Summary, as_json: bool) -> tuple[list[str], list[str]]:
    """(standard output's lines, standard error's): the JSON summary alone with
    ``as_json``; else each problem on standard error, the new agents and the counts on
    standard output."""
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
    return out, errors


def exit_status(summary: Summary) -> int:
    """1 when an item was refused or conflicted, else 0."""
    return 1 if summary.conflicting or summary.refused else 0
