"""Shared test setup: import gmbtools from scripts/, and find the fixture JSON files.

Fixtures named synthetic_*.json are hand-made in Google Benchmark's format with known numbers;
files from real GPU runs (gb183_default.json, ...) may be added beside them and are picked up by
the tests that parametrize over `ALL_FIXTURES`.
"""

import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ALL_FIXTURES = sorted(FIXTURES.glob("*.json"))
SYNTHETIC_DEFAULT = FIXTURES / "synthetic_gb183_default.json"  # GB 1.8.3, 3 repetitions
SYNTHETIC_CA = FIXTURES / "synthetic_gb171_ca.json"  # GB 1.7.1, no repetitions
