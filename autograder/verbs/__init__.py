"""The verbs that compose every layer: `autograde grade` (grade.py) and the Gradescope bundle (gradescope.py)."""
