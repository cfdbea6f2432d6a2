"""The three builds of the one benchmark source list (docs/design.md, "Builds"): the flavor name is
also the name of its JSON file in a results folder, and picks the binary that produced it."""

from typing import Any

FLAVORS = ("default", "ca", "cg")

BINARIES = {"default": "gmembench", "ca": "gmembench-ca", "cg": "gmembench-cg"}


# Families whose kernels compile alike in every build: the caching builds skip them (their
# JSON context counts them as gmb_default_flavor_only), so no flavor comparison includes them.
DEFAULT_FLAVOR_ONLY = ("texture", "constant", "local", "host", "managed")
# Built once too, since the bulk family (sm_90 on): kept apart so that the summaries of runs
# made before it still name the families those runs skipped.
DEFAULT_FLAVOR_ONLY_SINCE_BULK = ("bulk",)


def json_name(flavor: str) -> str:
    """File name of a flavor's results inside a results folder."""
    return f"{flavor}.json"


def flavors_of(rows: Any) -> list[str]:
    """Flavors present in a table with a flavor column (a pandas DataFrame), default/ca/cg
    first, then any other name in order of appearance."""
    present = list(dict.fromkeys(rows["flavor"].dropna()))
    return [f for f in FLAVORS if f in present] + [f for f in present if f not in FLAVORS]
