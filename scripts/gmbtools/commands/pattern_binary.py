"""The binary of `gmb pattern`, run once: its JSON comes on stdout; its own lines on stderr are
passed on as they come, but its one-line error becomes gmb's (with its exit status); a stop
signal is passed on to it."""

import codecs
import re
import shlex
import subprocess
import sys
import threading
from io import BufferedIOBase
from pathlib import Path
from typing import TextIO

from gmbtools.commands import stopping
from gmbtools.errors import GmbError

# The binary's one-line error, after what the progress line left in front of it: its last
# redraw and the clearing ("\r", ESC[K) that the message starts with.
_ERROR_LINE = re.compile(r"(?P<before>(?:.*\r)?(?:\x1b\[K)?)(?P<program>[\w.+-]+): error: "
                         r"(?P<reason>.*)", re.DOTALL)


def run_binary(cmd: list[str], repo: Path, env: dict[str, str],
               stopper: stopping.Stopper | None = None) -> str:
    """The binary's stdout. Its stderr goes on to ours as it comes, except its error line,
    which becomes the GmbError (with its exit status) when it fails. A stop signal is passed
    on to the binary (in a session of its own) and ends the command with 128 + N."""
    stopper = stopper or stopping.Stopper()
    try:
        proc = stopping.spawn(cmd, cwd=repo, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, start_new_session=True)
    except OSError as err:
        raise GmbError(f"cannot run {cmd[0]} ({err.strerror})") from None
    stopper.adopt(proc)
    assert proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    # Read stdout beside stderr: a JSON larger than the pipe would stop the binary otherwise.
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True)
    reader.start()
    errors = relay(proc.stderr, sys.stderr)
    reader.join()
    code = proc.wait()
    stopper.release(proc)
    if stopper.stopped:
        raise GmbError(f"interrupted by {stopper.name}: nothing measured is kept (a pattern "
                       "run takes seconds: run it again)", 128 + stopper.signal)
    if code != 0 and errors:
        program, reason = errors[-1]
        raise GmbError(f"{program}: {reason}", code)
    if code != 0:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with {code}"
        raise GmbError(f"{shlex.join(cmd[:1])} {how}", code)
    # Error lines of a run that went on to succeed are the binary's to judge: show them.
    sys.stderr.write("".join(f"{program}: error: {reason}\n" for program, reason in errors))
    return b"".join(out).decode("utf-8", errors="replace")


def relay(stream: BufferedIOBase, sink: TextIO) -> list[tuple[str, str]]:
    """Copy `stream` to `sink` line by line, a progress line (redrawn in place after '\\r') as
    soon as it comes; lines `<program>: error: <reason>` are kept back and returned."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    errors: list[tuple[str, str]] = []

    def line(text: str) -> None:
        error = _ERROR_LINE.fullmatch(text)
        if error:
            sink.write(error["before"])  # leaves the progress line cleared
            errors.append((error["program"], error["reason"].strip()))
        else:
            sink.write(text + "\n")

    pending = ""
    while chunk := stream.read1(4096):  # what is there, without waiting for 4096 bytes
        pending += decoder.decode(chunk)
        *lines, pending = pending.split("\n")
        for text in lines:
            line(text)
        if pending.startswith("\r"):  # a progress line redrawn in place: show it now, all
            cut = pending.rfind("\r")  # but a last piece that may yet become an error line
            cut = cut if _may_become_error(pending[cut:]) else len(pending)
            sink.write(pending[:cut])
            pending = pending[cut:]
        sink.flush()
    pending += decoder.decode(b"", final=True)
    if pending:
        line(pending)
        sink.flush()
    return errors


def _may_become_error(piece: str) -> bool:
    """Whether `piece` (after a progress line's last "\\r") could still grow into the
    binary's error line."""
    rest = piece.removeprefix("\r")
    if "\x1b[K".startswith(rest):
        return True
    rest = rest.removeprefix("\x1b[K")
    program = re.match(r"[\w.+-]*", rest)
    tail = rest[program.end():] if program else rest
    return ": error: ".startswith(tail) or tail.startswith(": error: ")
