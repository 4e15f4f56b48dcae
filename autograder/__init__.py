"""Autograder for the tic-tac-toe minimax course: build the course, grade a class, report."""

__version__ = "0.1.0"  # the package's version (pyproject reads it); part of every stored grade's parameters
