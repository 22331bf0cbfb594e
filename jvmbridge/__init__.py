"""jvmbridge: is the JVM using the CPU's AES instructions, and how fast is Java crypto next to OpenSSL?"""
__version__ = "0.1.0"


def compare(*args, **kwargs):
    """See :func:`jvmbridge.api.compare`; imported on use so worker processes start light."""
    from jvmbridge.api import compare as _compare

    return _compare(*args, **kwargs)


def load(paths):
    """See :func:`jvmbridge.api.load`."""
    from jvmbridge.api import load as _load

    return _load(paths)
