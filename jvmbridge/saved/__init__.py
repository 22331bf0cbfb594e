"""Saved runs: the record layout (schema), JSON-lines files (store), and published `openssl speed`
text read as runs of their own (speed_text, published)."""
