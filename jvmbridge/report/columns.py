"""How `report` may lay out columns: one per run, per host (servers side by side), per JDK (native
rows in a "native" column), per thread count (how throughput scales with --threads), per setting
(intrinsics or AES-NI on beside off, as a published "with and without AES-NI" text has them) or per
size. A module of its own, without pandas, so that the command line starts without loading it."""

COLUMN_KINDS = ("run", "host", "jdk", "threads", "setting", "size")
