"""Grading submissions: reading them, running them in the sandbox, judging the replies, the grade command."""
