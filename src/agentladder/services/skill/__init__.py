"""The evidence model as a service: observations in, skill estimates out.

- ``service``: ``SkillService``, which applies evidence to the store once per key and
  reads boards and agents' skills;
- ``evidence``: the evidence of a deliberation record, a reported deliberation, a
  judgment, a verdict or a model change;
- ``replay``: every state rebuilt from the stored log, and compared (``oracle verify``).
"""
