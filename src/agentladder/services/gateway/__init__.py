"""The OpenAI-compatible gateway: ``POST /v1/chat/completions`` routed to an agent's
provider (docs/gateway.md)."""
