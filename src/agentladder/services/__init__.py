"""Services: the rules of ``agentladder.domain`` combined with a store, a clock and chance.

Clocks and random sources are passed in, so tests and simulations are exact.
"""
