"""The one exception type for problems a user can cause and fix (a missing file, a failed build).

`cli.main` prints it as a single `gmb: error: ...` line and exits with `exit_code`, so a user
never sees a traceback for a mistake of theirs; anything else that escapes is a bug in gmb.
"""


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
