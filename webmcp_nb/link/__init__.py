"""The wire between a notebook and a browser: the relay's protocol, the mutual authentication, the relay itself,
frames' own sockets (lanes), a client's connection, and the per-user folder that holds the pairing secret.

Uses: core.
"""
