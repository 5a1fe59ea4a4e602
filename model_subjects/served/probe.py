"""Does the server's echo give the right prompt log-probabilities? Asked once, before any scoring.

For each probe text P: generate one token t greedily after P and read its log-probability g (a
generated token's log-probability is what servers get right); then echo P + t and read the prompt
log-probability e of that same token at the same position. A correct server gives e == g (same
weights, same context); llama-cpp-python 0.3.36's server pairs each prompt token with the
distribution of the *next* position (shifted by one) and fails; llama.cpp's own server returns no
prompt log-probabilities and fails. Only a server that passes every probe is scored from prompt
log-probabilities; otherwise protocols that need them are refused with the probe's reason.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

PROBE_TEXTS = ("The keys to the cabinet", "Once upon a time, there was a little")
# prefill and single-token decoding may run different kernels; a shifted or missing value is off
# by nats (e.g. -11.37 against -1.77), a correct one by float noise (1e-5 on CPU, ~1e-2 in bf16)
PROBE_TOLERANCE = 0.05


@dataclass
class ProbeReport:
    passed: bool
    reason: str
    tolerance: float = PROBE_TOLERANCE
    checks: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_probe(complete: Callable[[dict[str, Any]], dict[str, Any]], server: str,
              texts: tuple[str, ...] = PROBE_TEXTS, tolerance: float = PROBE_TOLERANCE) -> ProbeReport:
    """`complete(body)` posts one /v1/completions request (model filled in) and returns the JSON answer."""
    checks: list[dict[str, Any]] = []
    for p in texts:
        gen = complete({"prompt": p, "max_tokens": 1, "temperature": 0, "logprobs": 1})
        ch = gen["choices"][0]
        token = ch.get("text", "")
        lp = (ch.get("logprobs") or {}).get("token_logprobs") or [None]
        g = lp[0]
        if not token or g is None:
            return ProbeReport(False, f"server {server} gave no generated token with a log-probability after "
                                      f"{p!r}, so its prompt log-probabilities cannot be checked", tolerance, checks)
        echo = complete({"prompt": p + token, "max_tokens": 1, "temperature": 0, "logprobs": 1, "echo": True})
        lps = echo["choices"][0].get("logprobs") or {}
        offsets = lps.get("text_offset") or []
        values = lps.get("token_logprobs") or []
        tokens = lps.get("tokens") or []
        e = None
        for off, tok, v in zip(offsets, tokens, values, strict=False):
            if off == len(p) and tok == token:
                e = v
                break
        check = {"text": p, "token": token, "generated_logprob": g, "prompt_logprob": e}
        checks.append(check)
        if e is None:
            return ProbeReport(False, f"server {server} returned no prompt log-probability for {token!r} after "
                                      f"{p!r} when asked to echo the prompt (echo + logprobs)", tolerance, checks)
        check["difference"] = abs(float(e) - float(g))
        if check["difference"] > tolerance:
            return ProbeReport(
                False,
                f"server {server}'s prompt log-probabilities disagree with its own generated-token "
                f"log-probabilities: after {p!r} the greedy token {token!r} has log-probability {g:.4f} when "
                f"generated but {e:.4f} when the same text is echoed (tolerance {tolerance}); its echo output "
                "is wrong (llama-cpp-python's server shifts it by one position), so it is not used for scoring",
                tolerance, checks)
    return ProbeReport(True, f"prompt log-probabilities equal generated-token log-probabilities within {tolerance} "
                             f"on {len(texts)} probe text(s)", tolerance, checks)
