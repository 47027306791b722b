"""Channel decoders: token IDs -> segments (Harmony messages, tag-dialect blocks).

Nothing here knows what a segment means; :mod:`tokenparse.routing` decides that.
"""
