"""The conductor: every configuration of a comparison live at once in warmed workers, run in short
slices in a fresh random order each cycle, so every ratio is taken between slices moments apart;
forks are added until those ratios are sharp. ``conduct`` the loop, ``pairing`` the statistics,
``slices`` the worker conversation.
"""
