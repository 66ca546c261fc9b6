"""The judge: everything the gate runs over an agent's work, and how it is confined."""
