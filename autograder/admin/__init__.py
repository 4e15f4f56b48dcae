"""Running a course: its policy, roster, exports, the feedback handed back and similar submissions."""
