"""Hu & Levy (2023), seeds/003: data, prompts, scoring, measures and figures of `reproduce hu-levy2023`."""
