"""The offline demo workspace: a small git project with missions, no network, no API key."""
