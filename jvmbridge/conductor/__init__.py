"""The conductor: every configuration live at once in warmed workers, run in short slices in a fresh
random order each cycle, so ratios are between slices moments apart; forks added until sharp."""
