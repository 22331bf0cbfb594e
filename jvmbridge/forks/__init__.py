"""Child processes: parent and worker sides, their messages (protocol), what a worker times (measure)."""
