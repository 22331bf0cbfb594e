"""`compare`'s pipeline: the request, the jobs planned and run (runner), then ratios and cliffs."""
