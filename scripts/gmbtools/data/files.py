"""Files written whole or not at all, and the one line a write that fails becomes.

A file is written beside itself and renamed over its old self, so a write that fails (a full
disk, a folder removed) leaves the old file or none: never half a file, never the copy.
Standard library only, like `gmb run`.
"""

import errno
import os
import shutil
from pathlib import Path

_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
# The exit status of a command that could not write its results (sysexits' EX_IOERR), gmb's
# and gmembench's alike.
WRITE_FAULT_STATUS = 74


def write_whole(path: Path, data: str | bytes) -> Path:
    """`data` as the file `path` (text as UTF-8), whole or not at all; raises OSError."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        if isinstance(data, str):
            temporary.write_text(data, encoding="utf-8")
        else:
            temporary.write_bytes(data)
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    return path


def free_space(path: Path) -> str:
    """"12.0 KiB free on its file system" for the folder of `path`, or "" where it cannot be
    told."""
    folder = path if path.is_dir() else path.parent
    try:
        free = float(shutil.disk_usage(folder).free)
    except OSError:
        return ""
    units = ("B", "KiB", "MiB", "GiB", "TiB")
    unit = 0
    while free >= 1024 and unit < len(units) - 1:
        free /= 1024
        unit += 1
    amount = f"{free:.0f}" if unit == 0 else f"{free:.1f}"
    return f"{amount} {units[unit]} free on its file system"


def is_full(err: OSError) -> bool:
    return err.errno in _FULL


def write_error(err: OSError, fallback: Path) -> str:
    """"cannot write PATH (No space left on device; 0 B free on its file system)"."""
    path = Path(err.filename) if err.filename else fallback
    why = err.strerror or str(err)
    if is_full(err):
        free = free_space(path)
        why = f"{why}; {free}" if free else why
    return f"cannot write {path} ({why})"


def remove_quietly(path: Path) -> None:
    """Removes `path` if it is there; a file that cannot be removed stays."""
    try:
        os.unlink(path)
    except OSError:
        pass
