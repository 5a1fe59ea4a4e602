"""twinlab experiments package."""
