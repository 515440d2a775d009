"""Request matching: which recorded interaction answers a request, and what a miss says."""
