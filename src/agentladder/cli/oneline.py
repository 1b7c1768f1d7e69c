"""One-line errors for the command line: ``field: problem (value)``, exit 1; ``--debug`` for more.

``one_line_errors(app)`` wraps a Typer app: it adds the global ``--debug`` option and makes
every failure of every command (a bad option value, a configuration or store error, a
pydantic validation error, anything unexpected) print one line on stderr and exit with
status 1. With ``--debug`` (``agentladder --debug COMMAND ...``) the error is raised as is,
so its traceback shows. Usage mistakes that are not a bad value (an unknown option, a
missing argument) keep click's exit status 2, also on one line.

``describe(error)`` is the one line of an error, for callers that report it themselves.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

import typer
from pydantic import ValidationError
from typer import _click as click  # the click that this Typer vendors and raises from
from typer._click.exceptions import (
    BadParameter,
    ClickException,
    MissingParameter,
    NoArgsIsHelpError,
)
from typer.core import TyperGroup

from agentladder.errors import AgentladderError, InvalidInput, shown_value

__all__ = ["OneLineGroup", "describe", "one_line_errors"]

_DEBUG = "debug"


def _validation_line(error: ValidationError, prefix: str = "") -> str:
    details = error.errors()
    first = details[0]
    where = prefix + ".".join(str(part) for part in first["loc"])
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, InvalidInput):
        reason = cause.reason
    elif isinstance(cause, ValueError):
        reason = str(cause)
    else:
        reason = first["msg"]
    more = f"; and {len(details) - 1} more" if len(details) > 1 else ""
    shown = f" ({shown_value(first['input'])})" if "input" in first else ""
    return f"{where or error.title}: {reason}{shown}{more}"


def describe(error: BaseException) -> str:
    """The one line that reports ``error``: ``field: problem (value)`` where they are known."""
    if isinstance(error, AgentladderError):
        return str(error)
    if isinstance(error, ValidationError):
        return _validation_line(error)
    if isinstance(error, BadParameter) and not isinstance(error, MissingParameter):
        name = error.param.opts[0] if error.param is not None and error.param.opts else "value"
        return f"{name}: {error.message}"
    if isinstance(error, ClickException):
        return error.format_message()
    if isinstance(error, OSError) and error.strerror:
        where = error.filename if error.filename is not None else type(error).__name__
        return f"{where}: {error.strerror}"
    return f"{type(error).__name__}: {error} (agentladder --debug ... shows the traceback)"


def _print(line: str) -> None:
    # no rich markup: the line holds user input, which may contain brackets
    click.echo(f"error: {line}", err=True)


def reflow(text: str | None) -> str | None:
    """``text`` with each paragraph on one line (paragraphs: separated by a blank line), so
    that help is wrapped by the terminal's width, never at a docstring's line ends."""
    if text is None:
        return None
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", inspect.cleandoc(text))]
    return "\n\n".join(p for p in paragraphs if p)


def _reflow_all(command: click.Command) -> None:
    """Reflow the help of ``command``, its options and arguments, and of its subcommands."""
    command.help = reflow(command.help)
    command.short_help = reflow(command.short_help)
    for param in command.params:
        text = getattr(param, "help", None)  # options and Typer's arguments have one
        if isinstance(text, str):
            param.help = reflow(text)  # type: ignore[attr-defined]
    for sub in getattr(command, "commands", {}).values():
        _reflow_all(sub)


class OneLineGroup(TyperGroup):
    """A Typer group whose failures are reported on one line (see the module docstring),
    and whose help, and every command's, wraps by the terminal's width (``reflow``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _reflow_all(self)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, BrokenPipeError):
            raise
        except BadParameter as error:
            if not isinstance(error, MissingParameter):
                error.exit_code = 1  # a bad value, like every other bad input
            raise
        except ClickException:
            raise
        except Exception as error:  # every failure: one line unless --debug
            if _debugging(ctx):
                raise
            _print(describe(error))
            raise typer.Exit(1) from error

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            code = super().main(
                args, prog_name, complete_var, standalone_mode=False,
                windows_expand_args=windows_expand_args, **extra,
            )  # fmt: skip
        except NoArgsIsHelpError as error:
            click.echo(error.ctx.get_help() if error.ctx else error.format_message())
            code = error.exit_code
        except ClickException as error:
            _print(describe(error))
            code = error.exit_code
        except typer.Abort:
            _print("aborted")
            code = 1
        except BrokenPipeError:  # the reader went away (| head): nothing more to say
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # so the exit's flush does not fail again
            code = 141  # as a shell reports a command ended by SIGPIPE
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


def _debugging(ctx: click.Context) -> bool:
    return bool(ctx.find_root().params.get(_DEBUG))


def _root(
    debug: bool = typer.Option(
        False, "--debug", help="Show the full traceback of an error, not one line."
    ),
) -> None:
    """Reputation, ranking and trust for AI agents."""


def one_line_errors(app: typer.Typer) -> typer.Typer:
    """Give ``app`` the global ``--debug`` option and one-line errors; returns ``app``."""
    app.info.cls = OneLineGroup
    app.callback()(_root)
    return app
