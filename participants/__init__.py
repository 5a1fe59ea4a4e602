"""twinlab participants package."""
