"""docs/config.md documents every key of the configuration's models."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from agentladder.config import Settings

DOC = Path(__file__).resolve().parent.parent / "docs" / "config.md"


def _models_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for argument in getattr(annotation, "__args__", ()) for m in _models_in(argument)]


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every key under ``model``, as docs/config.md writes it (``api.tokens[].role``)."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        keys.append(path)
        subs = _models_in(field.annotation)
        many = "tuple[" in str(field.annotation)
        for sub in subs:
            if len(subs) > 1:  # a discriminated union: each kind's keys apart
                keys += _keys(sub, f"{path}.({sub.model_fields['kind'].default}) ")
            else:
                keys += _keys(sub, f"{path}[]." if many else f"{path}.")
    return keys


def _rows() -> dict[str, list[str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def test_every_configuration_key_is_documented() -> None:
    """Each key of every section (agents' backends too) has a row with type, default and meaning."""
    rows = _rows()
    keys = _keys(Settings)
    assert len(keys) > 100
    missing = [key for key in keys if key not in rows]
    assert missing == []
    blank = [key for key in keys if not all(cell.strip() for cell in rows[key])]
    assert blank == []


def test_readme_links_the_configuration_reference() -> None:
    """The README links docs/config.md."""
    readme = (DOC.parent.parent / "README.md").read_text(encoding="utf-8")
    assert "(docs/config.md)" in readme
