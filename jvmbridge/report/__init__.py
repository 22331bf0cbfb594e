"""`report`: saved runs side by side (history), and the layouts its columns can take (columns)."""
