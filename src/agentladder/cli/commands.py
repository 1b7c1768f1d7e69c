"""The commands that run things: serve, agent, demo, examples, config check, version."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from agentladder import __version__
from agentladder.cli.oneline import one_line_errors
from agentladder.cli.shown import average, dollars
from agentladder.config import Settings, load_settings, parse_settings
from agentladder.domain.stats import latency_p50, task_success_ratio
from agentladder.errors import AgentladderError, InvalidInput
from agentladder.examples import cost_example, ranking_examples, validation_rates, xp_example

app = one_line_errors(
    typer.Typer(
        name="agentladder",
        help="Reputation, ranking and trust for AI agents.",
        no_args_is_help=True,
        add_completion=False,
    )
)
config_app = typer.Typer(help="Work with configuration files.", no_args_is_help=True)
app.add_typer(config_app, name="config")

console = Console()


@app.command()
def version() -> None:
    """Print the installed agentladder version."""
    console.print(__version__)


@app.command()
def demo(
    db: Annotated[Path, typer.Option(help="The SQLite file to write (replaced).")] = Path(
        "agentladder-demo.db"
    ),
    deliberations: Annotated[int, typer.Option(min=1, max=10_000)] = 60,
) -> None:
    """Eight simulated agents deliberate 60 times on SQLite; show ranks and XP leaderboards."""
    from agentladder.demo import ladder_note, run_demo  # noqa: PLC0415 (services load here)

    with Progress(console=console) as progress:
        task = progress.add_task("deliberations", total=deliberations)
        result = asyncio.run(
            run_demo(db, deliberations, lambda done: progress.update(task, completed=done))
        )
    ranks = Table(title=f"Ranks after {result.deliberations} deliberations (floor-based promotion)")
    for column in ("agent", "rank", "wins", "avg score", "deliberations", "p50 ms", "success"):
        ranks.add_column(column)
    ordered = sorted(result.stats.items(), key=lambda kv: (-kv[1].rank, -kv[1].avg_score, kv[0]))
    for agent_id, stats in ordered:
        p50 = latency_p50(stats)
        ratio = task_success_ratio(stats)
        ranks.add_row(
            agent_id, str(stats.rank), str(stats.wins),
            average(stats.avg_score, stats.deliberations_completed),
            str(stats.deliberations_completed), "-" if p50 is None else f"{p50:.0f}",
            "-" if ratio is None else f"{ratio:.0%}",
        )  # fmt: skip
    console.print(ranks)
    board = Table(title="XP leaderboard (the Oracle)")
    for column in ("#", "agent", "provider", "model", "xp", "level", "tasks", "avg score"):
        board.add_column(column)
    for row in result.leaderboard:
        board.add_row(
            str(row.position), row.agent_id, row.provider, row.model, str(row.xp),
            row.level.value, str(row.tasks), f"{row.average_score:.2f}",
        )  # fmt: skip
    console.print(board)
    skills = Table(
        title="Skill (the evidence model: 0-10 with 95% intervals) beside the hidden quality;"
        " tier 1: not separated from the best among settled agents"
    )
    for column in ("tier", "agent", "skill", "interval", "hidden quality"):
        skills.add_column(column)
    for entry in result.skills:
        hidden = result.hidden_quality.get(entry.agent_id)
        skills.add_row(
            "provisional" if entry.tier is None else str(entry.tier), entry.agent_id,
            f"{entry.skill:.2f}", f"{entry.low:.2f}-{entry.high:.2f}",
            "-" if hidden is None else f"{hidden:.1f}",
        )  # fmt: skip
    console.print(skills)
    for task_type, rows in result.by_task_type.items():
        best = ", ".join(
            f"{r.agent_id} ({r.specialization_xp} XP, {r.specialization_level})" for r in rows
        )
        console.print(f"best at {task_type}: {best}")
    console.print(f"\n{ladder_note(result)}", soft_wrap=True, highlight=False)
    console.print(
        f"\nThe data is in {result.db}. Inspect it with any SQLite client, for example"
        f" `sqlite3 {result.db} 'select id, xp, level from agent_profiles order by xp desc'`."
    )
    served = "" if db == Path("agentladder-demo.db") else f" --db {result.db}"
    console.print(
        "Serve the demo's agents live (online: the dashboard's picker starts and follows"
        f" their deliberations): `{_self_command()} serve --demo{served}`, then open"
        " http://127.0.0.1:8000/dashboard",
        soft_wrap=True,
        highlight=False,
    )


def _self_command() -> str:
    """How to run this very ``agentladder``: its name when that is the one on the PATH,
    else its path (relative to the working directory when under it: ``.venv/bin/...``)."""
    script = Path(sys.executable).parent / "agentladder"
    found = shutil.which("agentladder")
    if not script.exists() or (found is not None and Path(found).resolve() == script.resolve()):
        return "agentladder"
    with contextlib.suppress(ValueError):
        return str(script.relative_to(Path.cwd()))
    return str(script)


@app.command()
def examples() -> None:
    """Run the worked examples of both specifications through the rules and print them."""
    console.rule("Floor-based promotion: the ranking specification's three deliberations")
    for example in ranking_examples():
        table = Table(title=f"Deliberation #{example.number}")
        for column in ("agent", "rank before", "score", "rank after"):
            table.add_column(column)
        for name, score in example.scores.items():
            after = str(example.ranks_after[name])
            if name in example.result.promoted:
                after = f"[bold green]{after} ▲[/]"
            table.add_row(name, str(example.ranks_before[name]), f"{score:.1f}", after)
        console.print(table)
        console.print(
            f"floor rank {example.result.floor_rank}, floor group "
            f"{', '.join(example.result.floor_group)}, promoted "
            f"{', '.join(example.result.promoted) or 'nobody'} ({example.result.reason})"
        )
    declared = cost_example()
    console.rule("Estimated cost per round")
    console.print(
        f"{declared.name} ({declared.model_name}, ${declared.input_price_per_mtok}/"
        f"${declared.output_price_per_mtok} per Mtok in/out): "
        f"{dollars(declared.estimated_cost_per_round)} per round"
    )
    award = xp_example()
    console.rule("The Oracle: the level-up specification's judgment")
    table = Table(title=f"XP awarded: {award.xp_awarded}")
    table.add_column("event")
    table.add_column("XP", justify="right")
    for line in award.breakdown:
        table.add_row(line.event, f"+{line.xp}")
    for unlock in award.achievements:
        table.add_row(f"achievement: {unlock.name}", f"+{unlock.xp}")
    console.print(table)
    rates = Table(title="Sentinel validation rate by level")
    rates.add_column("level")
    rates.add_column("rate", justify="right")
    for level, rate in validation_rates().items():
        rates.add_row(level.value, f"{rate:.2f}")
    console.print(rates)


@app.command()
def serve(
    config: Annotated[Path | None, typer.Option(help="The YAML configuration.")] = None,
    store: Annotated[str | None, typer.Option(help="Store URL (default: the config's).")] = None,
    db: Annotated[
        Path | None, typer.Option(help="A SQLite file: short for --store sqlite:///FILE.")
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8000,
    check_s: Annotated[
        float,
        typer.Option(
            min=0,
            max=3600,
            help="The longest the start-up integrity check of a SQLite file runs (0: skipped).",
        ),
    ] = 10.0,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of a start-up failure.")
    ] = False,
    create: Annotated[
        bool,
        typer.Option(
            "--create",
            help="Start an empty SQLite store even where the marker of a vanished file says"
            " one was (a missing file without a marker is created anyway).",
        ),
    ] = False,
    demo: Annotated[
        bool,
        typer.Option(
            "--demo",
            help="Serve the demo's agents live on the file `agentladder demo` wrote"
            " (--db, default agentladder-demo.db).",
        ),
    ] = False,
) -> None:
    """Serve the REST API, the in-process agents and the background work.

    Exit codes: 1 invalid configuration or store URL, 2 bad command line, 3 the store
    cannot be used, 4 the address cannot be listened on (docs/cli.md)."""
    from agentladder.api.app import create_served_app  # noqa: PLC0415 (only serve needs it)
    from agentladder.api.hosts import WILDCARDS  # noqa: PLC0415
    from agentladder.api.server import run_server  # noqa: PLC0415
    from agentladder.cli import startup  # noqa: PLC0415

    if db is not None:
        if store is not None:
            console.print("[red]--db and --store name the store twice: give one[/]")
            raise typer.Exit(code=2)
        store = f"sqlite:///{db}"
    if demo:  # a missing demo file is told as any bad option: one line, exit 1
        settings = _demo_settings(config, store, db)
    else:
        try:
            settings = load_settings(config) if config is not None else parse_settings(None)
        except (InvalidInput, ValidationError) as error:
            console.print(f"[red]invalid configuration:[/] {escape(str(error))}", soft_wrap=True)
            raise typer.Exit(code=startup.EXIT_CONFIG) from error
    url = store or settings.store
    try:
        startup.check_api(settings)
        startup.check_store_url(url)
        if create:
            from agentladder.cli.stores import forget_vanished_store  # noqa: PLC0415

            forget_vanished_store(url)
        sock = startup.listen(host, port)
        try:
            startup.check_store(url, check_s)
        except BaseException:
            sock.close()
            raise
    except AgentladderError as error:
        if debug:
            console.print_exception()
        shown = escape(str(error))
        console.print(f"[red]cannot start:[/] {shown}", soft_wrap=True, highlight=False)
        raise typer.Exit(code=startup.exit_code(error)) from error
    console.print(f"agentladder {__version__} on http://{host}:{port} (store {url})")
    if host.strip("[]") in WILDCARDS and not settings.api.allowed_hosts:
        console.print("listening on every address: requests naming this machine by an IP"
                      " address or localhost are answered; list its DNS names in"
                      " api.allowed_hosts (docs/api.md)", soft_wrap=True)  # fmt: skip
    # a failure of the app's own start (its lifespan) is told by uvicorn, which exits 3
    app = create_served_app(settings, store, host, freeze_heap=True)
    run_server(app, settings, sock, debug=debug)


def _demo_settings(config: Path | None, store: str | None, db: Path | None) -> Settings:
    """``serve --demo``: the demo's agents on the demo's SQLite file, which must exist."""
    from agentladder.demo import DEMO_DB, demo_settings  # noqa: PLC0415 (the demo only here)

    if config is not None:
        raise InvalidInput("--demo", str(config), "serves the demo's agents: give no --config")
    if store is not None and db is None:
        raise InvalidInput("--demo", store, "serves the demo's SQLite file: give --db, not --store")
    path = DEMO_DB if db is None else db
    if not path.is_file():
        raise InvalidInput("--db", str(path), "does not exist: run `make demo` (or"
                           " `agentladder demo`) first")  # fmt: skip
    return demo_settings(path)


@app.command()
def agent(
    config: Annotated[Path, typer.Option(help="The YAML configuration with the agent.")],
    name: Annotated[str, typer.Option(help="The agent's name in the configuration.")],
    server: Annotated[
        str,
        typer.Option(help="The server to join: nats://host:port, or http://host:port (its API)."),
    ],
    prefix: Annotated[str, typer.Option(help="The server's subject prefix.")] = "agentladder",
    token_env: Annotated[
        str, typer.Option(help="Over HTTP: the environment variable holding the agent token.")
    ] = "AGENTLADDER_TOKEN",
    concurrency: Annotated[
        int, typer.Option(min=1, max=64, help="Tasks answered at once (model calls in flight).")
    ] = 4,
) -> None:
    """Run one configured agent as its own process: it heartbeats and answers its tasks,
    saying when it starts, connects (its first heartbeat accepted) and stops."""
    from agentladder.agent_process import run_agent_process  # noqa: PLC0415 (agents only)

    token = os.environ.get(token_env) or None
    asyncio.run(
        run_agent_process(
            config, name, server, prefix, token=token, concurrency=concurrency, say=typer.echo
        )
    )


@config_app.command("check")
def config_check(
    path: Annotated[Path, typer.Argument(help="The YAML configuration file to check.")],
    probe: Annotated[
        bool,
        typer.Option(
            "--probe",
            help="Also call each agent's endpoint (and gateway.judge's backend) once with a"
            " tiny request; exit 1 if any fails.",
        ),
    ] = False,
) -> None:
    """Validate a configuration file and summarize it (with each agent's API key variable,
    and a warning for each token whose variable is unset, saying what serve would then
    accept); exit 1 with every bad field named, one line each. With --probe, one line per agent:
    ok, or what failed."""
    from agentladder.api.auth import token_notes  # noqa: PLC0415
    from agentladder.cli.configcheck import config_problems  # noqa: PLC0415
    from agentladder.providers.preflight import missing_keys, probe_agents  # noqa: PLC0415
    from agentladder.redaction import remember, scrub  # noqa: PLC0415
    from agentladder.secret_values import known_secrets  # noqa: PLC0415

    problems = config_problems(path)  # the store URL parsed, not connected to
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    if problems:
        raise typer.Exit(code=1)
    settings = load_settings(path)
    remember(known_secrets(settings))  # a probe's failure shows none of them
    shown_store = scrub(settings.store)
    console.print(f"[green]ok[/]: {len(settings.agents)} agents, store {shown_store}")
    missing = missing_keys(settings)
    for agent in settings.agents:
        console.print(
            f"  {agent.name}: {agent.provider_id or '-'} / {agent.model_name or '-'}, "
            f"{dollars(agent.estimated_cost_per_round)} per round"
            + (f"; warning: {missing[agent.name]}" if agent.name in missing else ""),
            highlight=False,
            soft_wrap=True,
        )
    for note in token_notes(settings.api):  # what serve would accept, tokens unset
        console.print(f"warning: {note}", highlight=False, soft_wrap=True)
    if not probe:
        return
    judge = settings.gateway.judge
    also = " and gateway.judge" if judge is not None and judge.backend is not None else ""
    console.print(f"probing {len(settings.agents)} agents{also} (one tiny request each):")
    probes = asyncio.run(probe_agents(settings))
    for found in probes:
        mark = "[green]ok[/]" if found.ok else "[red]FAILED[/]"
        console.print(f"  {found.agent}: {mark}: {found.detail}", soft_wrap=True, highlight=False)
    failed = [found.agent for found in probes if not found.ok]
    if failed:
        console.print(
            f"{len(failed)} of {len(probes)} agents failed the probe: {', '.join(failed)}",
            soft_wrap=True,
        )
        raise typer.Exit(code=1)


def main() -> None:
    """Entry point of the ``agentladder`` console script (and of ``python -m``)."""
    from agentladder.cli.handoff import mark_program  # noqa: PLC0415

    mark_program()
    app()
