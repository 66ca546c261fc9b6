"""Mission Control: the ``uh`` dashboard. It learns everything from what uh_core writes."""
