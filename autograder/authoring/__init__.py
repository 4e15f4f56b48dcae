"""Making the course from its single source: starters, notebooks, the student release, and checking them."""
