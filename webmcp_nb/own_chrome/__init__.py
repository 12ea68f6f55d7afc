"""Your own Chrome: ``connect()`` and the relay daemon it starts, pairing through native messaging, the native
host Chrome runs, and ``doctor``.

Uses: core, link, browser.
"""
