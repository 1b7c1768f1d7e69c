"""agentladder's benchmarks: each ``bench_*.py`` module measures against a baseline."""
