"""twinlab model_subjects package."""
