"""What every `autograde` verb shares: one parser that fails in one line, and one way to end with a problem.

A wrong option, or an input that cannot be used, is one line on stderr and exit status 2, before anything is
written; each verb says it the same way.
"""

import argparse
import sys

from autograder.outputs import clean_line

USAGE_ERROR = 2  # the exit status of a wrong option or an input that cannot be used


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its usage dump on error replaced by one line that points at --help."""

    def error(self, message):
        self.exit(USAGE_ERROR, f"{self.prog}: {message} (see {self.prog} --help)\n")


def fail(prog: str, message: str) -> int:
    """Say what is wrong in one clean line on stderr, as `prog: message`; the verb returns what this returns."""
    print(f"{prog}: {clean_line(message)}", file=sys.stderr)
    return USAGE_ERROR
