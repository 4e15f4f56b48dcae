"""`autograde tournament`: every student's player against every other and against three reference players."""
