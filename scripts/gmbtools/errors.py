"""The one exception type for problems a user can cause and fix (a missing file, a failed build),
and the exit statuses every subcommand shares (docs/usage.md, "Exit status").

`cli.main` prints a `GmbError` as a single `gmb: error: ...` line and exits with `exit_code`, so
a user never sees a traceback for a mistake of theirs; anything else that escapes is a bug in gmb.
"""

import errno

# Some inputs could not be read (or hold no benchmarks) and each got a warning; the command did
# its work from the others. Distinct from 1 (nothing done) so that a script can tell them apart.
PARTLY_READ = 3


class GmbError(Exception):
    """A user-facing error: one line of text and the process exit code to use."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        # Collapse newlines so the message stays one line whatever a subprocess printed.
        super().__init__(" ".join(message.split()))
        self.exit_code = exit_status(exit_code)


def exit_status(returncode: int) -> int:
    """Map a subprocess return code to a non-zero shell exit status.

    subprocess reports death by signal N as -N; shells report it as 128 + N, and a status
    outside 1..255 would be truncated (or read as success) by the calling shell.
    """
    if returncode < 0:
        return 128 + (-returncode)
    if returncode == 0 or returncode > 255:
        return 1
    return returncode


# What a path turned out to be, in words a user can act on (strerror says "Is a directory").
_OS_WORDS = {
    errno.ENOENT: "no such file or folder",
    errno.EISDIR: "is a folder, not a file",
    errno.ENOTDIR: "a file stands where a folder is wanted (on this path)",
    errno.EEXIST: "exists and is not a folder",
    errno.EACCES: "permission denied",
    errno.ENOSPC: "no space left on the device",
}


def os_error_line(err: OSError) -> str:
    """An OSError as `PATH: what it is`, for the one-line error."""
    words = _OS_WORDS.get(err.errno or 0) or err.strerror or str(err)
    return f"{err.filename}: {words}" if err.filename else words
