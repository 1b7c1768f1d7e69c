"""Bridges from other tools to a ladder: each an optional extra (docs/integrations.md)."""
