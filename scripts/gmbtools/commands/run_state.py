"""What the parts of one `gmb run` share while it runs: the stop it was asked for (its signals
are caught while benchmarks run: run.run and run.resume set `stopper`) and the files a binary
could not write."""

from gmbtools.commands import stopping

stopper = stopping.Stopper()
# gmembench's exit status when it cannot write its file (EX_IOERR): the folder is full or
# gone, so the run stops there; write_faults names the files.
WRITE_FAULT_STATUS = 74
write_faults: list[str] = []
