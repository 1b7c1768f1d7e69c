"""Agents and how the service reaches them: the registry of heartbeats, and the transports.

- ``registry``: declarations by heartbeat, online status;
- ``wire``: what an agent process and the orchestrator say to each other;
- ``nats``: agents over NATS request-reply;
- ``http``: agents over HTTP long polls, for a service without NATS.
"""
