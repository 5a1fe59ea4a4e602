"""The built-in kinds' model units; importing this registers them (model_subjects.tasks imports it last)."""
from model_subjects.tasks import (choice, completion, judgment, rating, self_paced_reading,  # noqa: F401
                                  violation_detection)
