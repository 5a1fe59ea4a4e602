"""The built-in studies: one folder per published paradigm (experiments/studies.py finds them)."""
