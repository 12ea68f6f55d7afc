"""A browser the library launched, reached through its DevTools pipe (``--remote-debugging-pipe``: no port another
program could reach): the pipe itself, the page's own native tools of each tab as the ``WebMCP`` domain reports them,
and calls to them (``WebMCP.invokeTool``), in the relay's words, so the relay lists and calls them beside what the
extension reports.

Uses: core, link.
"""
