"""What every room stands on: the private event-loop thread and its blocking twins, the exceptions, page text
as data (escaped, bounded, invisible characters shown), the event stream and its words, the rules the agent's
two faces share (risk levels, policies, limits, texts), JavaScript's regular expressions run with a time limit, and
where this Python's installed commands are.

Uses: none.
"""
