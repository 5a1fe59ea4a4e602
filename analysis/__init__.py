"""twinlab analysis package."""
