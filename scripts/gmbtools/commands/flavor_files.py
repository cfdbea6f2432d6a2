"""The files of one flavor while a run makes them: a continuation's name (after a stall or for
--resume) and its merge into the flavor's file, the peer part of a concurrent node run merged
in, a file the binary left cut short closed, a stalled benchmark noted. Standard library only,
like `gmb run`."""

import re
import sys
from pathlib import Path

from gmbtools.analysis import health
from gmbtools.data import partial, results
from gmbtools.errors import GmbError

PEER_PART = "-peer"  # <flavor>-peer.json: the peer part of a concurrent node run, until merged
CONTINUATION = "-continued"  # <flavor>-continued[-N].json: after a stall or for --resume
CONTINUED = re.compile(rf"{CONTINUATION}(-\d+)?$")  # a stem's continuation suffix


def merge_part(into: Path, part: Path) -> str | None:
    """The peer part's file merged into the flavor's (its counts added up)."""
    return merge_into(into, part, adds_up=True)


def continuation(folder: Path, stem: str) -> Path:
    """A new <stem>-continued[-N].json, numbered after every one there (a merge may have left
    one behind): never written over, and --resume folds them in the order they were made."""
    def name(n: int) -> str:
        return f"{stem}{CONTINUATION}" + ("" if n == 1 else f"-{n}")

    n = max((n for _, n in _continuations(folder, stem)), default=0) + 1
    while (folder / health.health_file(name(n))).exists():  # a health file left behind
        n += 1
    return folder / f"{name(n)}.json"


def _continuations(folder: Path, stem: str) -> list[tuple[Path, int]]:
    """The continuations of `stem` in `folder` with their numbers (1 for the unnumbered one),
    in order."""
    found = []
    for path in folder.glob(f"{stem}{CONTINUATION}*.json"):
        match = CONTINUED.search(path.stem)
        if match and path.stem[:match.start()] == stem:
            found.append((path, int(match.group(1)[1:]) if match.group(1) else 1))
    return sorted(found, key=lambda item: item[1])


def fold_continuations(folder: Path, stem: str) -> None:
    """Continuations a stopped merge left beside the flavor's file merged into it, in order
    (a resume starts from everything measured)."""
    for part, _ in _continuations(folder, stem):
        target = results.stored(folder / f"{stem}.json")
        if target.name.endswith(".gz"):  # merged uncompressed; packed again at the end
            doc, _ = partial.read(target)
            partial.write(doc, folder / f"{stem}.json")
            target.unlink()
        problem = merge_into(folder / f"{stem}.json", part, adds_up=False)
        if problem:
            print(f"gmb: {problem}", file=sys.stderr, flush=True)
        else:
            health.merge_states(folder, stem, part.stem)


def close_cut_file(path: Path, interrupted: str) -> list[str]:
    """A file the binary left cut short (killed outright) closed after its last whole
    benchmark, saying so; the benchmarks it holds. [] where there is no file or nothing whole."""
    if not path.exists():
        return []
    try:
        doc, cut = partial.read(path)
    except GmbError as err:
        print(f"gmb: {err}", file=sys.stderr, flush=True)
        return []
    if cut:
        if interrupted:
            doc["context"][partial.INTERRUPTED] = partial.interrupted_text(
                interrupted, doc, " (the binary was killed; closed by gmb run)")
        try:
            partial.write(doc, path)
        except OSError as err:  # a full disk: the cut file stays as the binary left it
            print(f"gmb: cannot close {path}: {err.strerror or err}", file=sys.stderr, flush=True)
    return partial.names(doc)


def note_stalled(path: Path, name: str, timeout: float) -> None:
    """The flavor file's context names every benchmark the watchdog ended (gmb_stalled)."""
    try:
        doc, _ = partial.read(path)
    except GmbError:
        return
    note = f"{name} (no output for {timeout:.0f} s)"
    old = doc["context"].get(partial.STALLED)
    doc["context"][partial.STALLED] = f"{old}; {note}" if old else note
    partial.write(doc, path)


def merge_into(into: Path, part: Path, adds_up: bool) -> str | None:
    """Append the benchmarks of `part` to `into` and remove `part`. Where either cannot be
    read, both stay as they are and the reason comes back."""
    try:
        extra, _ = partial.read(part)
    except GmbError as err:
        return f"nothing to merge: {err}"
    if not into.exists():
        part.rename(into)
        return None
    try:
        doc, _ = partial.read(into)
    except GmbError as err:
        return f"{err}; {part.name} left beside it"
    partial.write(partial.merge(doc, extra, adds_up), into)
    part.unlink()
    return None
