"""jvmbridge: is the JVM using the CPU's AES instructions, and how fast is Java crypto next to OpenSSL?"""
__version__ = "0.3.0"  # CHANGELOG.md says what each version brought

__all__ = ["compare", "load"]


def __getattr__(name: str):
    """``compare`` and ``load`` from jvmbridge.api, with their real signatures, imported on first
    use so worker processes start light (no pandas)."""
    if name in __all__:
        from jvmbridge import api

        return getattr(api, name)
    raise AttributeError(f"module 'jvmbridge' has no attribute {name!r}")
