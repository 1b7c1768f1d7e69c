"""Importing judged results: JSONL files of judgments and Inspect AI evaluation logs,
applied in batches, each judgment exactly once (docs/import.md)."""
