"""How `report` may lay out columns: per run, host, JDK, thread count, setting or size. Without
pandas, so the command line starts without loading it."""

COLUMN_KINDS = ("run", "host", "jdk", "threads", "setting", "size")
