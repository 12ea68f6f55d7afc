"""A connected browser as objects: ``Browser``, ``Tab``, tools and their schemas, skills, the side panels' feed,
the gate every face acting for a model passes before it reads or acts on a site (``gate.check_site``), and
``launch()`` with the Chromium it starts.

Uses: core, link, devtools.
"""
