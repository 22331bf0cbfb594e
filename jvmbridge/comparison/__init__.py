"""`compare`'s pipeline: one request (request), the jobs each engine plans for it and their run,
saving every result as it comes (runner), then what only rows side by side show: ratios and
their significance (ratios), cost cliffs between adjacent sizes (cliffs)."""
