"""Bring your study: people's data written by other tools (PsychoPy Builder, jsPsych/JATOS, PCIbex/Ibex, a
plain table) read into twinlab sessions, with the design read from the data.

Every format `twinlab import` reads is an `Importer` of the one registry (registry.py). Readers (one module per
tool) turn a tool's files, read by the one text reader (text_input.py), into `SourceTrial` records (records.py),
keeping every original field; the pipeline checks every cell (cells.py) and where it writes (outputs.py), maps
and reads the design, and writes them as sessions and a spec (writing.py, sessions.py).
"""
