"""Python side of gmembench: runs the benchmark binaries and turns their Google Benchmark JSON
into summaries, tables (pandas), figures (matplotlib) and reports. See docs/design.md for the
naming contract and the context keys these modules rely on.
"""

__version__ = "0.1.0"  # the one place: pyproject.toml reads it
