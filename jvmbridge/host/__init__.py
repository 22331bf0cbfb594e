"""Host readings: the CPU and its AES features (cpu), what else ran on the machine meanwhile (machine)."""
