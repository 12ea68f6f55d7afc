"""Your own Chrome: ``connect()`` and the relay daemon it starts, pairing through native messaging, the native
host Chrome runs (which also starts the daemon for the side panel), and ``doctor``.

Uses: core, link, browser.
"""
