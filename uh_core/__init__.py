"""Ultimate Harness engine: headless, never imports textual."""

__version__ = "0.1.0"
