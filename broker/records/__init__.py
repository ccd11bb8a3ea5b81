"""Command records: what each browser command did, for recovery after a lost reply."""
