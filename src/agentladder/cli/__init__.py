"""The ``agentladder`` command line: a thin layer over the library (Typer + rich)."""

from agentladder.cli import card as _card  # noqa: F401  (registers card verify)
from agentladder.cli import data as _data  # noqa: F401  (registers the data commands)
from agentladder.cli import deliberate as _deliberate  # noqa: F401  (registers deliberate)
from agentladder.cli import export as _export  # noqa: F401  (registers export)
from agentladder.cli import importer as _importer  # noqa: F401  (registers import)
from agentladder.cli import route as _route  # noqa: F401  (registers the route command)
from agentladder.cli import savings as _savings  # noqa: F401  (registers the savings command)
from agentladder.cli import skillapply as _skillapply  # noqa: F401  (registers skill apply)
from agentladder.cli import skills as _skills  # noqa: F401  (registers the skills command)
from agentladder.cli.commands import app, main

__all__ = ["app", "main"]
