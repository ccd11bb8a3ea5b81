"""Actions: input dispatch with preflight, pinning of composite steps and evidence."""
