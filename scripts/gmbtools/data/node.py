"""A node folder's record, `node.json`: the GPUs of a node run (`gmb run --devices`), the
command and, for a concurrent run of several GPUs, the wall time of each phase."""

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gmbtools.data.files import write_whole
from gmbtools.errors import GmbError

NODE_FILE = "node.json"


@dataclass(frozen=True)
class NodeDevice:
    index: int
    uuid: str
    name: str
    folder: str  # gpu<index>-<uuid>, inside the node folder


@dataclass(frozen=True)
class NodePhase:
    """One phase of a concurrent node run: the local families on every GPU at once, or the peer
    family on one GPU while the others wait."""

    kind: str  # "local" or "peer"
    devices: list[int]
    wall_s: float
    partner: int | None = None  # the peer phase's partner GPU

    def label(self) -> str:
        if self.kind == "peer":
            return f"peer family on GPU {self.devices[0]} (partner GPU {self.partner})"
        return "local families, every GPU at once"


@dataclass(frozen=True)
class Node:
    gmb_command: str
    concurrent: bool
    devices: list[NodeDevice] = field(default_factory=list)
    phases: list[NodePhase] = field(default_factory=list)  # none: no peer phase was run


def is_node(folder: Path) -> bool:
    return (folder / NODE_FILE).is_file()


def save_node(folder: Path, node: Node) -> None:
    write_whole(folder / NODE_FILE, json.dumps(asdict(node), indent=2) + "\n")


def load_node(folder: Path) -> Node:
    path = folder / NODE_FILE
    try:
        data = json.loads(path.read_text())
        devices = [NodeDevice(**d) for d in data.pop("devices")]
        phases = [NodePhase(**p) for p in data.pop("phases", [])]
        return Node(devices=devices, phases=phases, **data)
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise GmbError(f"{path}: unreadable node record ({err})") from None
