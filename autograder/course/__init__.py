"""What the course is: its stages, the board, the reference answers and the checks of every stage."""
