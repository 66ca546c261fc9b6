"""Runtime adapters: one lifecycle contract over scripts, commands and real agent CLIs."""
