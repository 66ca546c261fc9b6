"""Typed models for every file uh reads or writes."""
