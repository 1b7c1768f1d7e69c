"""Deliberations from request to result, and what follows them.

- ``orchestrator``: admission, selection with the minimum-rank filter, running, reports;
- ``rounds``: one deliberation's rounds of proposals and peer evaluations;
- ``deadlines``: one timer for many concurrent calls;
- ``side_effects``: the ranking update and the Oracle's judgments after completion;
- ``recovery``: finishing what a stopped instance acknowledged.
"""
