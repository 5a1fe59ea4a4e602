"""The built-in kinds' model units; importing this registers them (model_subjects.tasks imports it last)."""
import model_subjects.tasks.choice  # noqa: F401
import model_subjects.tasks.completion  # noqa: F401
import model_subjects.tasks.judgment  # noqa: F401
import model_subjects.tasks.rating  # noqa: F401
import model_subjects.tasks.self_paced_reading  # noqa: F401
import model_subjects.tasks.violation_detection  # noqa: F401
