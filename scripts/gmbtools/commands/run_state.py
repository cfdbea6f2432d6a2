"""What the parts of one `gmb run` share while it runs: the stop it was asked for (its signals
are caught while benchmarks run: run.run and run.resume set `stopper`) and the files a binary
could not write."""

from gmbtools.commands import stopping
from gmbtools.data.files import WRITE_FAULT_STATUS

stopper = stopping.Stopper()
# A binary that exits WRITE_FAULT_STATUS could not write its file: the folder is full or gone,
# so the run stops there. write_faults holds one line per file that could not be written.
__all__ = ["WRITE_FAULT_STATUS", "stopper", "write_faults"]
write_faults: list[str] = []
