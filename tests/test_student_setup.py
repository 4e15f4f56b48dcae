"""Do the README's student commands work as written, in a fresh virtual environment, from a fresh course copy?

The commands are read from the README's "For students" code block, so this test follows the README: if the
README changes, so does what is run. It needs the package registry (pip installs the course's dependencies).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from autograder.course.stages import ROOT

COURSE_FILES = ["pyproject.toml", "README.md", "autograder", "assignments"]


def student_commands(readme: str) -> list[str]:
    """The commands of the first sh block after "## For students", without their comments."""
    section = readme.split("## For students", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL).group(1)
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_student_commands_are_the_ones_this_test_expects():
    """Does the README name one install step, then only commands this test can run?"""
    commands = student_commands((ROOT / "README.md").read_text())
    assert commands[0] == "pip install -e ."
    assert sum(command.startswith("pip ") for command in commands) == 1
    assert all(shlex.split(command)[0] in ("pip", "pytest", "autograde", "python") for command in commands)


@pytest.mark.slow
def test_the_readme_s_student_commands_work_in_a_fresh_venv(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    for name in COURSE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, course / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(source, course / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", PIP_DISABLE_PIP_VERSION_CHECK="1")
    for command in student_commands((course / "README.md").read_text()):
        # As the student types it; `python` is the venv's (a fresh venv has no `python` shim elsewhere on PATH).
        done = subprocess.run(command, shell=True, cwd=course, env=env, capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        assert "command not found" not in output and "No module named" not in output, (command, output)
        if command.startswith("pip "):
            assert done.returncode == 0, (command, output)
            assert (venv / "bin" / "autograde").exists()
        elif command.startswith("autograde hint"):
            assert done.returncode == 0 and "hint 1 of" in done.stdout, (command, output)
        else:
            # The starters are not written yet: the tests run and fail, saying so.
            assert done.returncode == 1 and "not written yet" in output, (command, output)
