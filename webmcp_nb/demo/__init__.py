"""The bundled demo: its pages, their static server, a recorded session, and ``webmcp-nb demo``.

Uses: core, browser, recording, agent, replay.
"""
