"""The report: the results folder (`results_folder`), its plan (`plan`), sections and tables, figures, the
Data section, a general design's and self-paced reading's sections, and report.html (`render`)."""
