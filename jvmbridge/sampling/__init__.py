"""How many and how long: the sampling policy (policy), what is measured (workload), where a run stands (progress)."""
