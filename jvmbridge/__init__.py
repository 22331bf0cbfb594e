"""jvmbridge: is the JVM using the CPU's AES instructions, and how fast is Java crypto next to OpenSSL?"""
from jvmbridge.version import __version__ as __version__  # re-exported: jvmbridge.__version__

__all__ = ["compare", "load"]


def __getattr__(name: str):
    """``compare`` and ``load`` imported on first use, so worker processes start without pandas."""
    if name in __all__:
        from jvmbridge import api

        return getattr(api, name)
    raise AttributeError(f"module 'jvmbridge' has no attribute {name!r}")
