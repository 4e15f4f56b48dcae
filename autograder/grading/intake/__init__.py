"""Reading submissions safely: the pieces submissions.py puts together (see its docstring for the rules)."""
