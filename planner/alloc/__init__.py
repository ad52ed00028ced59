"""Static address assignment (DSA): give each buffer with a fixed lifespan a byte offset.

The problem and the independent validator come first; the engines (greedy, the exact search,
CP-SAT) and the portfolio that runs them follow. See ``docs/alloc.md``.
"""
