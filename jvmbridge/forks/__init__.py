"""Child processes: the parent and worker sides, the messages between them (protocol), what a worker times (measure)."""
