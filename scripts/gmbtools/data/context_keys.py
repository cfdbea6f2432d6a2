"""Context keys and benchmark names renamed since files were written: every loaded file reads
with today's names.

The peer keys are named as the flags: `gmb_peer` is `--gmb_peer`'s scope (all, skip, only),
`gmb_peer_partner` the partner's index (or `none (why)`), `gmb_peer_partner_source` whether
`--gmb_peer_partner` chose it. Files written before held the partner in `gmb_peer`, the source
in `gmb_peer_partner` and the scope in `gmb_peer_scope` (the oldest the partner alone).
Benchmark names: see `current_name`.
"""

from typing import Any

PEER_SCOPES = ("all", "skip", "only")
# old key -> today's key, in a file whose `gmb_peer` is no scope
_OLD_PEER_KEYS = {
    "gmb_peer": "gmb_peer_partner",
    "gmb_peer_partner": "gmb_peer_partner_source",
    "gmb_peer_scope": "gmb_peer",
}


def current(context: dict[str, Any]) -> dict[str, Any]:
    """`context` with today's key names (a new dict where a key was renamed; else itself)."""
    old = "gmb_peer_scope" in context or (
        "gmb_peer" in context and str(context["gmb_peer"]) not in PEER_SCOPES)
    if not old:
        return context
    return {_OLD_PEER_KEYS.get(key, key): value for key, value in context.items()}


BOTH_KEY = "gmb_peer_both"  # present: peer/copy/.../dir:both is each GPU pushing
_OLD_BOTH = {"dir:both": "dir:both_pull", "dir:both_push": "dir:both"}


def current_name(name: str, context: dict[str, Any]) -> str:
    """A benchmark's name today. Files without `gmb_peer_both` named the peer copy of each GPU
    pulling `dir:both` (today `dir:both_pull`) and of each pushing `dir:both_push` (today
    `dir:both`); the copy engine's `ref/memcpy_peer/dir:both` kept its name."""
    if BOTH_KEY in context or not name.startswith("peer/copy/"):
        return name
    return "/".join(_OLD_BOTH.get(part, part) for part in name.split("/"))
