"""Context keys renamed since files were written: every loaded file reads with today's names.

The peer keys are named as the flags: `gmb_peer` is `--gmb_peer`'s scope (all, skip, only),
`gmb_peer_partner` the partner's index (or `none (why)`), `gmb_peer_partner_source` whether
`--gmb_peer_partner` chose it. Files written before held the partner in `gmb_peer`, the source
in `gmb_peer_partner` and the scope in `gmb_peer_scope` (the oldest the partner alone).
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
