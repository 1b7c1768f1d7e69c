"""The OpenAI-compatible gateway: ``POST /v1/chat/completions`` (and ``POST /v1/responses``,
bridged to it) routed to an agent's provider (docs/gateway.md)."""
