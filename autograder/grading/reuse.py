"""Whether a stored result can stand for a new grading: what a grade depends on besides the files (the suite's
hash, the grader's version, the time limit, the isolation), and why a stored result is not the one to reuse."""

from autograder import __version__
from autograder.course.suite import suite_hash
from autograder.grading import sandbox
from autograder.record import GradingParameters


def grading_parameters(isolation: sandbox.Isolation, seconds: float) -> GradingParameters:
    """Everything besides the files that a grade depends on: results.json's extra_data.grading."""
    return GradingParameters(suite_hash(), __version__, float(seconds), isolation.level, isolation.cgroups)


def why_regraded(latest: dict | None, files_hash: str, parameters: GradingParameters) -> str | None:
    """Why a student's latest stored result is not the one to reuse, or None when there was none.

    latest: gradebook.latest's files_hash and parameters, None where an older gradebook did not record them.
    """
    if latest is None:
        return None
    if latest["files_hash"] != files_hash:
        return "the files changed"
    if latest["suite"] != parameters.suite:
        return "the grader or its hidden tests changed"
    if latest["time_limit"] is None:  # stored by a grader that recorded only the suite
        return "the stored result does not record its time limit and isolation"
    if latest["grader_version"] != parameters.grader_version:
        return "the grader or its hidden tests changed"
    changes = []
    if latest["time_limit"] != parameters.time_limit:
        changes.append(f"the time limit changed ({latest['time_limit']:g} s -> {parameters.time_limit:g} s)")
    if latest["isolation"] != parameters.isolation:
        changes.append(f"the isolation changed ({latest['isolation']} -> {parameters.isolation})")
    if latest["cgroups"] != parameters.cgroups:
        changes.append(f"the sandbox's cgroups changed ({latest['cgroups']} -> {parameters.cgroups})")
    return " and ".join(changes) or None
