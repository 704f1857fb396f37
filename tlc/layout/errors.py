"""The exception tlc.layout raises."""


class LayoutError(ValueError):
    """A layout cannot be read, queried or drawn as asked: an unknown buffer, a
    kernel without its IR snapshot, an index outside the buffer, a bad argument
    of tlc.layout.plot. The message says which."""
