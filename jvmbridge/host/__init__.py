"""Host readings: the CPU and its AES features (cpu), other load meanwhile (machine)."""
