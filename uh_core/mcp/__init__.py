"""``uh-core mcp``: uh as a Model Context Protocol server (docs/mcp.md).

Only ``uh-core mcp`` imports this package (and with it the optional ``mcp`` SDK): every
other command starts without it.
"""
