"""The wire between a notebook and a browser: the relay's protocol, the mutual authentication, the relay itself,
frames' own sockets (lanes), a client's connection, the per-user folder that holds the pairing secret, and the
per-site grants the relay keeps there and enforces (its checks, asks and answers).

Uses: core.
"""
