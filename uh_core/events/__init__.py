"""Event log: one append-only NDJSON writer, an offset-keeping reader, and the fold."""
