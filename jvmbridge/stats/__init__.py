"""Statistics over forks (summary) and where each fork settled (steady)."""
