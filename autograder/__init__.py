"""Autograder for the tic-tac-toe minimax course: build the course, grade a class, report."""
