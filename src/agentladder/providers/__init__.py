"""Providers: how an agent is actually asked to propose an answer or evaluate a peer's.

- ``simulated``: deterministic agents for the demo, tests and simulations.
- ``openai``: any OpenAI-compatible chat-completions endpoint.
"""
