"""The person's policy in force (bp/policy.py reads it) and the audit journal of mutating commands."""
