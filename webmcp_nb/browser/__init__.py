"""A connected browser as objects: ``Browser``, ``Tab``, tools and their schemas, skills, the side panels' feed,
and ``launch()`` with the Chromium it starts.

Uses: core, link.
"""
