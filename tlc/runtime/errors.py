"""The exceptions raised by tlc.runtime."""


class LaunchError(RuntimeError):
    """The driver or the runtime library failed: no driver or GPU, a PTX that
    does not JIT, a launch the driver rejects, an asynchronous kernel fault."""


class ArgumentError(ValueError):
    """The arguments of a kernel call do not match its parameters. Raised
    before anything is launched; the message names the parameter."""


class ArtifactError(ValueError):
    """A kernel artifact is malformed or of an unknown format or version."""
