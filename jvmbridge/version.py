"""The version, at the bottom: every record names its writer without loading jvmbridge/__init__."""
__version__ = "0.3.0"  # CHANGELOG.md says what each version brought
