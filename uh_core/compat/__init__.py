"""Reading (and writing for) the TypeScript uh: its file shapes translated into uh's models."""
