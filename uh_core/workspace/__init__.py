"""The workspace read as one typed snapshot: missions, criteria, runtimes, harness, sandboxes.

``store.Store`` reads ``.harness/`` through uh_core's own readers and models, opens large
event logs at their end and folds their history after, and returns ``state.Snapshot``
values. The dashboard is one consumer; ``uh-core status --json`` prints the same snapshot.
"""
