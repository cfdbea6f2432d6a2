"""Results stay small: `gmb run` and `gmb peers` keep Google Benchmark's JSON gzip-compressed
(`default.json` -> `default.json.gz`). Every reader takes either form
(`results.stored`, `results.load`). Standard library only, like `gmb run`."""

import gzip
import shutil
from pathlib import Path

from gmbtools.data.files import remove_quietly


def pack(path: Path) -> Path:
    """Compress `path` into `path.gz` (no timestamp inside, so equal files compress to equal
    bytes), remove `path`, and return the new path. Where the copy cannot be written (a full
    disk) it is removed, `path` stays as it was, and the OSError is raised."""
    packed = path.with_name(path.name + ".gz")
    temporary = path.with_name(packed.name + ".tmp")
    try:
        with open(path, "rb") as source, open(temporary, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as target:
                shutil.copyfileobj(source, target)
        temporary.replace(packed)
    except OSError:
        remove_quietly(temporary)
        raise
    path.unlink()
    return packed
