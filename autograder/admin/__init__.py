"""Running a course: the policy file, submission times, the roster, LMS exports, feedback handed back, similar code."""
