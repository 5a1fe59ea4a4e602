"""Bring your study: people's data written by other tools (PsychoPy Builder, jsPsych/JATOS, PCIbex/Ibex, a
plain table) read into twinlab sessions, with the design read from the data (issue 50).

Readers (one module per tool) turn a tool's files into `SourceTrial` records (records.py), keeping every
original field; the pipeline maps, checks and writes them as sessions and a spec.
"""
