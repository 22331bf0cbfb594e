"""The conductor: every configuration of a comparison live at once, each in a warmed worker, run
in short slices in a fresh random order each cycle, so that every ratio is taken between slices
that ran moments apart; forks are added until those ratios are sharp.

``conduct``: the loop itself (what runs and which ratios are asked come from
comparison.interleaved); ``pairing``: the statistics of paired slices; ``slices``: the worker's side
of the conversation and the parent's handle on a worker.
"""
