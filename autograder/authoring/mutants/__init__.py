"""`autograde verify --mutants`: prove that the tests catch every single-point mistake of the reference solutions.

make.py makes every mutant of the student's part of a reference solution (one change each); inprocess.py loads
one and runs its calls in this process under the grader's CPU budget; wrong.py decides, with the oracle, whether
it is wrong (an equivalent mutant is not a mistake); judged.py and visible.py say whether the hidden checks
(judged by the grader's own code) and the visible tests catch it; verdict.py judges every mutant in a few forked
workers; report.py prints the figures and the requirements that fail.
"""

from autograder.authoring.mutants.report import run, select

__all__ = ["run", "select"]
