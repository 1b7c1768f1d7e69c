"""``python -m agentladder.cli``."""

from agentladder.cli import main

main()
