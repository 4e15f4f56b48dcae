"""What the parent sends a child while it runs, on file descriptor 4: a second job that may only be handed over once
the child's replies to its first are read (the stage's hidden calls after its visible ones, grading/judge.py).

The run's reader queues it as it reads; the supervisor writes it as the pipe takes it, never blocking on a child
that does not read, and closes the pipe once the last of it is written, so the child reads end-of-file after it.
"""

from __future__ import annotations

import errno
import fcntl
import os

MORE_FD = 4  # the child's end of the pipe
_PIPE_BYTES = 1 << 20  # asked for the pipe (the kernel's default limit for any user): a hidden job fits in one write


class Outbox:
    def __init__(self) -> None:
        self.pending = bytearray()
        self.closing = False  # all is queued: close the pipe once pending is written
        self.fd = -1  # the parent's end, while it is open (the supervisor's)

    def send(self, data: bytes) -> None:
        """Queue data, all that the child is sent: the pipe is closed once it is written."""
        self.pending += data
        self.closing = True

    def open(self) -> int:
        """The pipe: returns the child's end (the caller hands it over as MORE_FD); the parent's end is kept here."""
        read_end, write_end = os.pipe()
        try:
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        except OSError:
            pass  # a smaller pipe only means more writes
        os.set_blocking(write_end, False)
        self.fd = write_end
        return read_end

    def pump(self) -> bool:
        """Write what the pipe takes now; True while some is left for when it has room."""
        try:
            while self.pending and self.fd >= 0:
                written = os.write(self.fd, self.pending)
                del self.pending[:written]
        except BlockingIOError:
            return True
        except OSError as error:  # the child closed its end or ended: what it did not read is dropped
            if error.errno != errno.EPIPE:
                raise
            self.pending.clear()
            self.closing = True
        return False

    @property
    def finished(self) -> bool:
        """All of it written and nothing more to come: the pipe can be closed."""
        return self.closing and not self.pending

    def shut(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
