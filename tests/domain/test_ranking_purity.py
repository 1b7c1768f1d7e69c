"""The ranking rules are pure: they import nothing that does I/O."""

from __future__ import annotations

import ast
import importlib

import pytest

MODULES = ["agents", "promotion", "scoring", "stats"]
ALLOWED = {
    "__future__",
    "agentladder",
    "collections",
    "dataclasses",
    "fractions",
    "math",
    "pydantic",
    "re",
    "statistics",
    "typing",
}


@pytest.mark.parametrize("name", MODULES)
def test_ranking_module_imports_only_pure_modules(name: str) -> None:
    """Each ranking module imports only the stdlib math/typing modules, pydantic and itself."""
    module = importlib.import_module(f"agentladder.domain.{name}")
    assert module.__file__ is not None
    with open(module.__file__, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert {top.split(".")[0] for top in imported} <= ALLOWED


@pytest.mark.parametrize("name", MODULES)
def test_ranking_module_declares_its_public_api(name: str) -> None:
    """Each ranking module has an __all__ whose names all exist."""
    module = importlib.import_module(f"agentladder.domain.{name}")
    assert module.__all__
    assert all(hasattr(module, public) for public in module.__all__)
