"""Training interface: a PettingZoo AEC environment over the rules engine (docs/bots.md).

Needs the ``training`` extra (pettingzoo, gymnasium, numpy); the service never imports it.
"""
