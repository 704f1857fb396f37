"""tlc's version, in a module of its own so that tlc's modules read it without
importing the package's __init__ (no import cycle)."""

__version__ = "0.1.0"
