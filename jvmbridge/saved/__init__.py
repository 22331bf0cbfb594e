"""Saved runs: the record layout, JSON-lines files, and published `openssl speed` text as runs."""
