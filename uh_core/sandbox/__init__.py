"""Sandboxes: one git worktree per run, recorded in a locked index."""
