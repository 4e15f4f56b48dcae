#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image: the bundle is unpacked in
# /autograder/source. It installs what the grader needs (Python 3.11+, bubblewrap for the sandbox) and the
# grader itself, editable, into /autograder/venv. It is not run by the test suite (it needs apt and PyPI):
# try it with `docker run --rm -v "$PWD/bundle:/autograder/source" ubuntu:22.04 bash /autograder/source/setup.sh`.
set -euo pipefail

SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$SOURCE")"
VENV="$ROOT/venv"
export DEBIAN_FRONTEND=noninteractive

updated=""
apt_install() {
    if [ -z "$updated" ]; then
        apt-get update -q
        updated=yes
    fi
    apt-get install -y -q --no-install-recommends "$@"
}

# The first interpreter that is Python 3.11 or newer, by absolute path.
pick_python() {
    local name path
    for name in python3.13 python3.12 python3.11 python3; do
        path="$(command -v "$name" 2>/dev/null)" || continue
        if "$path" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$path"
            return 0
        fi
    done
    return 1
}

# bubblewrap gives the full sandbox where the container allows namespaces; the grader falls back to rlimits and
# an unprivileged uid per run where it does not (and says so in every student's results). prlimit and setpriv
# (util-linux) and kill (procps) are needed at both levels.
wanted=()
command -v bwrap >/dev/null 2>&1 || wanted+=(bubblewrap)
command -v prlimit >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 || wanted+=(util-linux)
[ -x /usr/bin/kill ] || [ -x /bin/kill ] || wanted+=(procps)
if [ "${#wanted[@]}" -gt 0 ]; then
    apt_install "${wanted[@]}"
fi

# Ubuntu 22.04's python3 is 3.10; the course needs 3.11, which 22.04 ships as python3.11.
if ! PYTHON="$(pick_python)"; then
    apt_install python3.11 python3.11-venv
    PYTHON="$(pick_python)"
fi
rm -rf "$VENV"
if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    apt_install "$(basename "$PYTHON")-venv"  # Debian splits ensurepip out of the interpreter
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
fi

"$VENV/bin/python" -m pip install --quiet --upgrade pip
# Editable: the grader finds solutions/ and the visible tests next to its own package, in $SOURCE.
"$VENV/bin/python" -m pip install --quiet -e "$SOURCE"

# Built once into the image, not per submission: the package's bytecode, and every stage's checks, oracle answers
# and plans in root's cache (course/cache.py), which each run_autograder reads instead of building them again.
"$VENV/bin/python" -m compileall -q "$SOURCE/autograder"
(cd "$SOURCE" && PYTHONPATH="$SOURCE" "$VENV/bin/python" -m autograder.verbs.gradescope warm)

# Where the container gives no mount namespace, the sandbox's runs see files as an unprivileged uid: nothing of the
# grader (reference solutions, hidden checks) may be readable to one. The grader checks this before grading.
chmod -R go-rwx "$SOURCE" "$VENV"
chmod 0711 "$ROOT"

# Fail the image build now rather than at the first submission.
"$VENV/bin/python" -c "import autograder.verbs.grade, autograder.verbs.gradescope"
echo "setup.sh: grader installed in $VENV with $("$VENV/bin/python" --version)"
