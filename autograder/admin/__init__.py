"""Course administration: the policy file, submission times, the roster and the exports into an LMS."""
