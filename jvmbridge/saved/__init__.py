"""Saved runs: the record layout and its versions (schema), JSON-lines files written as results
finish and read back whatever survives (store), and `openssl speed` text people publish read as
runs of their own (speed_text finds every run in it, published gives each its setting)."""
