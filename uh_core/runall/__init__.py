"""Cross-runtime QA: one mission on several runtimes, diffs grouped, agreement decided."""
