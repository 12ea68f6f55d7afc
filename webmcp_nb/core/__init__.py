"""What every room stands on: the private event-loop thread and its blocking twins, the exceptions, page text
as data (escaped, bounded, invisible characters shown), the event stream and its words, and the rules the agent's
two faces share (risk levels, policies, limits, texts).

Uses: none.
"""
