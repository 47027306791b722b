"""Routing: segments -> content, reasoning and tool blocks, one router per dialect family.

Routers consume the segments of :mod:`tokenparse.channels` and drive the payload grammar a
dialect declares (a tools-layer class passed in as a value: routing never imports tools).
"""
