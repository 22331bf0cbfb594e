"""The version, on the bottom floor: every record, document and page says which jvmbridge wrote it,
and none of them should need the package's front door (jvmbridge/__init__, which loads the API)."""
__version__ = "0.3.0"  # CHANGELOG.md says what each version brought
