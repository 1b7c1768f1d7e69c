"""The Oracle and its Sentinels: judged tasks, XP, levels, validation sampling.

- ``service``: the Oracle (judgments, raw XP, settle events, profiles, leaderboards);
- ``models``: what it takes and returns;
- ``sentinel``: validation sampling by level and probation, and verdicts;
- ``judges``: scoring an output that arrives without a score;
- ``mentors``: expert agents' best outputs kept as examples;
- ``verify``: ``oracle verify``, replay compared with the store;
- ``probation``: which agents are on probation now (/metrics).
"""
