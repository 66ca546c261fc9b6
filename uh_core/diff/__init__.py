"""Diffs: capture a working tree as a patch, read the paths a patch touches, classify them.

- :mod:`uh_core.diff.patch_paths` — ``touched_paths(lines)``, ``scan_file``, ``scan_stream``
- :mod:`uh_core.diff.globs` — repository path globs compiled to regexes
- :mod:`uh_core.diff.classify` — tests / source / other buckets, ``classify_patch_file``
- :mod:`uh_core.diff.capture` — ``capture_diff``, ``capture_mission_diff``
- :mod:`uh_core.diff.stats` — per-file added/removed lines via unidiff (``hunk_stats``)

Imports stay in the submodules so that importing this package costs nothing.
"""
