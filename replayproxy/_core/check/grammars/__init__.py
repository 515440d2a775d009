"""One stream grammar per provider API, each a rule set the checker runs."""
