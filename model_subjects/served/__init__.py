"""Model subjects on an OpenAI-compatible server (vLLM, llama.cpp, llama-cpp-python): see `backend`."""
from model_subjects.served.backend import ServedBackend, ServedStreamGroup
from model_subjects.served.client import RetryPolicy, ServerClient, ServerError
from model_subjects.served.probe import PROBE_TOLERANCE, ProbeReport, run_probe

__all__ = ["ServedBackend", "ServedStreamGroup", "RetryPolicy", "ServerClient", "ServerError", "PROBE_TOLERANCE",
           "ProbeReport", "run_probe"]
