"""Saved runs: the record layout and its versions (schema), JSON-lines files written as results
finish and read back whatever survives (store), runs side by side (history) and their figures
(plot)."""
