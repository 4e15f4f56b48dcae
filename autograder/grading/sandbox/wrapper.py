"""The /bin/sh wrapper that runs first in a run, as root: it enters the run's cgroup and mounts its private /tmp."""

from __future__ import annotations

WRAPPER_FAILED = 125  # exit code of the /bin/sh wrapper when it could not enter the cgroup or mount /tmp


SH = "/bin/sh"
WRAPPER = (
    't=$1; shift; while [ "$1" != -- ]; do '
    'if [ "$1" = -m ]; then mount -a -T "$2" || { echo "$t" >&2; exit 125; }; shift 2; '
    'else echo 0 >"$1" || { echo "$t" >&2; exit 125; }; shift; fi; done; shift; exec "$@"'
)
