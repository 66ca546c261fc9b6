"""Spec-driven verification: run a mission's checks and criteria, decide its status."""
