"""Results stay small: `gmb run` and `gmb peers` keep Google Benchmark's JSON gzip-compressed
(`default.json` -> `default.json.gz`). Every reader takes either form
(`results.stored`, `results.load`). Standard library only, like `gmb run`."""

import gzip
import shutil
from pathlib import Path


def pack(path: Path) -> Path:
    """Compress `path` into `path.gz` (no timestamp inside, so equal files compress to equal
    bytes), remove `path`, and return the new path."""
    packed = path.with_name(path.name + ".gz")
    with open(path, "rb") as source, open(packed, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as target:
            shutil.copyfileobj(source, target)
    path.unlink()
    return packed
