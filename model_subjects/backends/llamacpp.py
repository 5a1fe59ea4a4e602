"""llama.cpp backend (llama-cpp-python): GGUF models run quantised, in this process, on the CPU.

Correctness rules, the transformers backend's (tested against it on the bundled model):
  * log-probabilities come from the model's own logits: the context is created with
    `logits_all=True`, so `Llama.scores[i]` holds the logits after token i, and twinlab takes the
    log-softmax itself (float64). The library's `echo` log-probabilities are never used (its server
    shifts prompt log-probabilities by one position);
  * a (context, continuation) pair is tokenised as lm-evaluation-harness does (trailing spaces of the
    context move into the continuation, `context + continuation` encoded whole and split at the
    length of the encoded context), with llama.cpp's own tokenizer; special tokens written in the
    text (a chat template's markers) are parsed as the transformers tokenizer does;
  * BOS is an explicit setting (`add_bos`), not the GGUF's `add_bos_token`: prepended to every
    sequence or to none; an empty context is conditioned on the BOS token (EOS if there is none).

State: llama.cpp keeps one KV cache per context, and `Llama` records which tokens are in it
(`input_ids[:n_tokens]`). `Llama.eval(tokens)` first drops every cached position from `n_tokens` on
(`kv_cache_seq_rm(-1, n_tokens, -1)`) and then decodes `tokens` at positions `n_tokens...`; so
setting `n_tokens = k` keeps the first k tokens' keys/values (and their rows of `scores`) and the
next `eval` runs only the new suffix.

Batch invariance by construction: llama.cpp's results depend on how a sequence is cut into eval
calls (measured on the bundled model: a token evaluated in another chunk moved a log-probability by
up to 0.3 nats, e.g. single-token calls at the start of a sequence). So every sequence is evaluated
in canonical blocks: eval calls over positions [0, 32), [32, 64), ... and a last partial block that
ends where the sequence ends; a cached prefix is reused only up to a block boundary (or whole, when
the cache holds exactly the sequence asked for). Each block is then computed from the same tokens,
the same earlier keys/values and in the same call shape whoever asks, so a score does not depend on
what was evaluated before: `loglikelihood` in any order or composition, `loglikelihood_alone`, a
running `stream` and a resumed one give bit-identical results (tested). The price: up to 31 tokens
of a partial block are evaluated again when a sequence grows.

No extra buffer types (`use_extra_bufts = False`): llama.cpp can move weights into "extra" CPU
buffer types at load time (runtime repacking: CPU_REPACK, and on Xeons with AMX the AMX buffer).
On AMX CPUs (Sapphire Rapids and later) llama-cpp-python 0.3.36, built for the native CPU, repacks
the bundled Q4_1 weights into the AMX buffer and its first `decode` dies with a segmentation
fault. Every Llama twinlab makes is loaded without them (`new_llama`), on every CPU, so a run does
not depend on the machine's instruction set; the weights are then used as the GGUF stores them
(the same log-probabilities here: the bundled model's tensors are not of a repackable type).
`Llama()` has no argument for this (an unknown keyword vanishes into its `**kwargs`), so the field
is set on the `llama_model_params` it starts from; the sidecar records `use_extra_bufts: false` and
whether the CPU has AMX (`amx_cpu`). The served llama-cpp-python server is started the same way
(`python -m model_subjects.served.llama_server`).
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from model_subjects.backends.base import Backend, ModelLoadError, Progress, Stream
from model_subjects.backends.registry import register_backend
from model_subjects.loading import ResolvedModel, resolve_gguf, sha256_file
from model_subjects.requests import GenerationRequest, LoglikelihoodRequest, LoglikelihoodResult, PairTokenizer

TOKENISATION = "lm-evaluation-harness pair split (whole string encoded, split at context length), llama.cpp tokenizer"


AMX_FLAGS = ("amx_bf16", "amx_complex", "amx_fp16", "amx_int8", "amx_tile")
_PARAMS_LOCK = threading.Lock()


def cpu_amx_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> list[str]:
    """The AMX flags this CPU reports (empty: no AMX, or no /proc/cpuinfo to read)."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return []
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(f for f in line.partition(":")[2].split() if f.startswith("amx"))
    return sorted(flags)


@contextlib.contextmanager
def extra_buffer_types_off() -> Iterator[None]:
    """While open, every `llama_cpp.Llama` made in this process loads with `use_extra_bufts = False`.

    `Llama.__init__` starts from `llama_cpp.llama_model_default_params()` and sets the fields it has
    arguments for; this wraps that function so the struct it returns already has the field off.
    """
    import llama_cpp.llama_cpp as lc  # llama.cpp loads only when its backend runs

    if "use_extra_bufts" not in {f[0] for f in lc.llama_model_params._fields_}:
        raise ModelLoadError("this llama-cpp-python has no model parameter use_extra_bufts (0.3.36 has); "
                             "twinlab cannot turn off weight repacking, which crashes on AMX CPUs")
    with _PARAMS_LOCK:
        orig = lc.llama_model_default_params

        def params() -> Any:
            p = orig()
            p.use_extra_bufts = False
            return p

        lc.llama_model_default_params = params
        try:
            yield
        finally:
            lc.llama_model_default_params = orig


def new_llama(path: str | Path, **kwargs: Any) -> Any:
    """`llama_cpp.Llama(path, **kwargs)` without extra buffer types (see the module docstring); checked."""
    import llama_cpp  # llama.cpp loads only when its backend runs

    with extra_buffer_types_off():
        llm = llama_cpp.Llama(str(path), **kwargs)
    if llm.model_params.use_extra_bufts:
        raise ModelLoadError("llama.cpp loaded the model with extra buffer types (weight repacking) although "
                             "twinlab turned them off")
    return llm


def _ftype_names() -> dict[int, str]:
    import llama_cpp  # llama.cpp loads only when its backend runs

    return {int(v): k[len("LLAMA_FTYPE_MOSTLY_"):] if k.startswith("LLAMA_FTYPE_MOSTLY_") else k[len("LLAMA_FTYPE_"):]
            for k, v in vars(llama_cpp).items() if k.startswith("LLAMA_FTYPE_") and isinstance(v, int)}


class _LlamaState:
    """One llama.cpp context, evaluated in canonical blocks (see the module docstring)."""

    BLOCK = 32  # positions per eval call; a cached prefix is reused up to a multiple of this

    def __init__(self, llm: Any):
        self.np = np
        self.llm = llm
        self.tokens_evaluated = 0  # tokens run through the model (benchmarks)
        self.eval_calls = 0

    def evaluate(self, tokens: Sequence[int]) -> Any:
        """Make the cached tokens begin with `tokens`; the rows of `scores` for them (logits after each)."""
        np = self.np
        llm = self.llm
        n = len(tokens)
        if n > llm.n_ctx():
            raise ModelLoadError(f"a context of {n} tokens is longer than the llama.cpp context size n_ctx="
                                 f"{llm.n_ctx()}; use a running window (--context running:W) or -B n_ctx=...")
        have = llm.n_tokens
        m = min(have, n)
        if m:
            diff = np.flatnonzero(llm.input_ids[:m] != np.asarray(tokens[:m], dtype=np.intc))
            lcp = int(diff[0]) if len(diff) else m
        else:
            lcp = 0
        if lcp == n == have:  # exactly this sequence is cached, evaluated in its canonical blocks
            return llm.scores[:n]
        keep = (lcp // self.BLOCK) * self.BLOCK
        llm.n_tokens = keep  # eval() drops cached positions >= n_tokens, then decodes at n_tokens...
        for start in range(keep, n, self.BLOCK):
            llm.eval(list(tokens[start:min(n, start + self.BLOCK)]))
            self.eval_calls += 1
        self.tokens_evaluated += n - keep
        return llm.scores[:n]

    def log_softmax_rows(self, rows: Any) -> Any:
        """Log-softmax of float32 logits rows, computed in float64."""
        np = self.np
        x = np.asarray(rows, dtype=np.float64)
        m = x.max(axis=-1, keepdims=True)
        return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))

    def score(self, full: Sequence[int], n_cont: int) -> tuple[list[float], bool]:
        """Log-probabilities of the last `n_cont` tokens of `full` given the tokens before them."""
        np = self.np
        rows = self.evaluate(full[:-1])[len(full) - n_cont - 1:]
        lp = self.log_softmax_rows(rows)
        tgt = np.asarray(full[-n_cont:])
        vals = lp[np.arange(n_cont), tgt]
        greedy = bool((rows.argmax(axis=-1) == tgt).all())
        return [float(v) for v in vals], greedy


@register_backend("llamacpp")
class LlamaCppBackend(PairTokenizer, Backend):
    """A GGUF model run quantised by llama.cpp (llama-cpp-python), on the CPU."""

    def __init__(self, llm: Any, resolved: ResolvedModel, *, add_bos: bool = False, threads: int | None = 1,
                 n_batch: int = 512, seed: int = 0, load_seconds: float = 0.0):
        self.llm = llm
        self.resolved = resolved
        self.name = resolved.name
        self.add_bos = bool(add_bos)
        self.threads = threads
        self.n_batch = n_batch
        self.seed = seed
        self.load_seconds = load_seconds
        self.dtype_name = "float32"  # activations and logits; the weights keep the GGUF's quantisation
        self.state = _LlamaState(llm)
        bos, eos = llm.token_bos(), llm.token_eos()
        self.bos_id = bos if bos is not None and bos >= 0 else None
        self.eos_id = eos if eos is not None and eos >= 0 else None
        if self.add_bos and self.bos_id is None:
            raise ModelLoadError(f"model {self.name!r} has no BOS token; run it with --no-add-bos")
        self.start_id = self.bos_id if self.bos_id is not None else self.eos_id
        self.prefix_ids: tuple[int, ...] = (self.bos_id,) if self.add_bos else ()  # type: ignore[assignment]
        self._enc_cache: dict[str, tuple[int, ...]] = {}
        self.gguf_sha256 = sha256_file(self.path)

    @property
    def path(self) -> Path:
        return Path(self.resolved.path)

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, model: str | None = None, *, dtype: str = "float32", device: str = "cpu", add_bos: bool = False,
             batch_size: int | str = "auto", threads: int | None = 1, n_ctx: int | None = None, n_batch: int = 512,
             seed: int = 0) -> "LlamaCppBackend":
        """Load a GGUF file with `logits_all=True` (a row of logits per evaluated token).

        `dtype` and `device` exist for the common settings only: llama.cpp computes in float32 on the
        CPU here (the weights stay in the GGUF's quantisation); anything else is refused. `batch_size`
        has no meaning (each sequence is evaluated on its own) and is ignored. `n_ctx`: context size in
        tokens (default: the model's training context).
        """
        if str(dtype).lower() not in ("float32", "fp32", "auto"):
            raise ModelLoadError(f"the llamacpp backend computes in float32 with the GGUF's own weights "
                                 f"quantisation; --dtype {dtype} is not available (use float32)")
        if str(device).lower() not in ("cpu", "auto"):
            raise ModelLoadError(f"the llamacpp backend runs on the CPU in this installation; --device {device} "
                                 "is not available")
        resolved = resolve_gguf(model)
        try:
            import llama_cpp  # noqa: F401 (imported only to check that the package is installed)
        except ImportError:
            raise ModelLoadError("the llamacpp backend needs the Python package llama-cpp-python "
                                 "(scripts/setup.sh installs llama-cpp-python[server]==0.3.36)") from None
        t0 = time.perf_counter()
        nt = int(threads) if threads else max(1, (os.cpu_count() or 2) // 2)
        try:
            llm = new_llama(resolved.path, n_ctx=int(n_ctx or 0), n_batch=int(n_batch), n_ubatch=int(n_batch),
                            n_threads=nt, n_threads_batch=nt, logits_all=True, n_gpu_layers=0, seed=int(seed),
                            verbose=False)
        except ModelLoadError:
            raise
        except Exception as exc:  # llama.cpp says little more than "failed to load"
            raise ModelLoadError(f"llama.cpp could not load {resolved.path!r}: {type(exc).__name__}: {exc}") from None
        return cls(llm, resolved, add_bos=add_bos, threads=nt, n_batch=int(n_batch), seed=int(seed),
                   load_seconds=time.perf_counter() - t0)

    def describe(self) -> dict[str, Any]:
        import llama_cpp  # llama.cpp loads only when its backend runs

        md = self.llm.metadata
        try:
            ftype = _ftype_names().get(int(md.get("general.file_type", -1)), md.get("general.file_type"))
        except ValueError:
            ftype = md.get("general.file_type")
        tok = self.llm._model
        return {
            "name": self.name,
            "backend": self.backend_name,
            "kind": self.resolved.kind,
            "path": self.resolved.path,
            "revision": self.gguf_sha256,
            "weights_sha256": self.gguf_sha256,
            "gguf": {"path": self.resolved.path, "sha256": self.gguf_sha256, "size": self.path.stat().st_size,
                     "file_type": ftype, "architecture": md.get("general.architecture"),
                     "general_name": md.get("general.name"),
                     "add_bos_token_in_file": md.get("tokenizer.ggml.add_bos_token")},
            "quantization": ftype,
            "n_parameters": int(tok.n_params()),
            "dtype": self.dtype_name,
            "device": "cpu",
            "add_bos": self.add_bos,
            "bos_token": self._piece(self.bos_id),
            "empty_context_token": self._piece(self.start_id),
            "n_ctx": int(self.llm.n_ctx()),
            "n_ctx_train": int(tok.n_ctx_train()),
            "n_batch": self.n_batch,
            "eval_block": _LlamaState.BLOCK,
            "threads": self.threads,
            "seed": self.seed,
            "use_extra_bufts": bool(self.llm.model_params.use_extra_bufts),  # False: no repacking (AMX-safe)
            "amx_cpu": bool(cpu_amx_flags()),
            "cpu_amx_flags": cpu_amx_flags(),
            "logprobs": "log-softmax (float64) of Llama.scores rows (logits_all=True); never the library's echo",
            "tokenisation": TOKENISATION,
            "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
            "versions": {"llama_cpp_python": llama_cpp.__version__},
        }

    def _is_eog(self, tid: int) -> bool:
        """End of generation, by llama.cpp's vocabulary (EOS, and EOT-like tokens the GGUF marks)."""
        import llama_cpp  # llama.cpp loads only when its backend runs

        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, tid))

    def _piece(self, tid: int | None) -> str | None:
        if tid is None:
            return None
        return self.llm._model.token_get_text(tid)

    # ------------------------------------------------------------------ tokenisation
    def encode(self, text: str) -> tuple[int, ...]:
        """Token ids of `text`, no BOS added; special-token markers in the text are parsed (memoised)."""
        ids = self._enc_cache.get(text)
        if ids is None:
            ids = tuple(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else ()
            if len(self._enc_cache) > 200_000:
                self._enc_cache.clear()
            self._enc_cache[text] = ids
        return ids

    def decode_ids(self, ids: Sequence[int]) -> str:
        """The text of token ids, exactly (to find where a context ends among a whole text's tokens)."""
        return self.llm.detokenize(list(ids), special=True).decode("utf-8", errors="replace")

    def _unit(self, r: LoglikelihoodRequest) -> tuple[tuple[int, ...], int]:
        ctx, cont = self.encode_pair(r.context, r.continuation)
        return self.sequence_start(ctx) + ctx + cont, len(cont)

    # ------------------------------------------------------------------ scoring
    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest],
                      progress: Progress | None = None) -> list[LoglikelihoodResult]:
        """Requests in token order, so each evaluates only what it does not share with the one before."""
        units = [self._unit(r) for r in requests]
        order = sorted(range(len(units)), key=lambda i: units[i][0])
        out: list[LoglikelihoodResult | None] = [None] * len(units)
        done = 0
        for i in order:
            full, n_cont = units[i]
            lps, greedy = self.state.score(full, n_cont)
            out[i] = LoglikelihoodResult(float(sum(lps)), greedy, n_cont, tuple(lps))
            done += 1
            if progress is not None and done % 64 == 0:
                progress(64)
        if progress is not None and done % 64:
            progress(done % 64)
        return out  # type: ignore[return-value]

    def loglikelihood_alone(self, requests: Sequence[LoglikelihoodRequest]) -> list[LoglikelihoodResult]:
        """Each request on its own: the same numbers as `loglikelihood` (canonical blocks), by construction."""
        out: list[LoglikelihoodResult] = []
        for r in requests:
            out += self.loglikelihood([r])
        return out

    # ------------------------------------------------------------------ generation
    def _greedy(self, ids: list[int], until: Sequence[str], max_new_tokens: int,
                skip_leading_whitespace: bool) -> str:
        """Greedy continuation of `ids` (the model's argmax each step), cut before the first stop string."""
        st = self.state
        llm = self.llm

        def body_start(text: str) -> int:
            return len(text) - len(text.lstrip()) if skip_leading_whitespace else 0

        if not ids:
            ids = [self.start_id]  # type: ignore[list-item]
        rows = st.evaluate(ids)
        logits = rows[len(ids) - 1]
        new: list[int] = []
        text = ""
        for _ in range(max_new_tokens):
            nxt = int(logits.argmax())
            if self._is_eog(nxt):
                break
            new.append(nxt)
            text = llm.detokenize(new, special=False).decode("utf-8", errors="ignore")
            if any(s in text[body_start(text):] for s in until):
                break
            ids = ids + [nxt]
            logits = st.evaluate(ids)[len(ids) - 1]
        b0 = body_start(text)
        cut = min([text.index(s, b0) for s in until if s in text[b0:]] or [len(text)])
        return text[:cut]

    def generate_until(self, requests: Sequence[GenerationRequest],
                       progress: Progress | None = None) -> list[str]:
        outs = []
        for req in requests:
            ctx = self.encode(req.context.rstrip(" "))
            ids = list(self.sequence_start(ctx) + ctx)
            outs.append(self._greedy(ids, req.until, req.max_new_tokens, req.skip_leading_whitespace))
            if progress is not None:
                progress(1)
        return outs

    def stream(self, reuse_cache: bool = True, **kwargs: Any) -> "LlamaStream":
        return LlamaStream(self, reuse_cache=reuse_cache)

    def chat_template(self, messages: list[dict[str, str]], add_generation_prompt: bool) -> str:
        """The GGUF's own chat template, rendered as transformers renders a tokenizer's template."""
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"model {self.name!r} has no chat template")

        def raise_exception(message: str) -> None:
            raise ValueError(message)

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.globals["raise_exception"] = raise_exception
        return env.from_string(template).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                                bos_token=self._piece(self.bos_id) or "",
                                                eos_token=self._piece(self.eos_id) or "")


class LlamaStream(Stream):
    """A running context on llama.cpp's KV cache: only the tokens not yet evaluated are run
    (from the last block boundary on).

    Committed tokens are the concatenation of the encodings of each `extend` segment, as in the
    transformers backend's `KVStream`. A query evaluates `committed + context (+ continuation)`;
    whatever of it is already cached (the history, and the trial's prompt when the next segment
    begins with it) is kept, so each token of a session is evaluated once.
    """

    def __init__(self, backend: LlamaCppBackend, reuse_cache: bool = True):
        self.b = backend
        self.reuse_cache = reuse_cache
        self.ids: list[int] = list(backend.prefix_ids)
        self._segments: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self._segments)

    @property
    def tokens_encoded(self) -> int:
        return self.b.state.tokens_evaluated

    def extend(self, text: str) -> None:
        self.ids.extend(self.b.encode(text))
        self._segments.append(text)

    def _claim(self) -> None:
        if not self.reuse_cache:  # --no-kv-cache: every query evaluates its whole context again
            self.b.llm.n_tokens = 0

    def _base(self, ctx: Sequence[int]) -> list[int]:
        full = self.ids + list(ctx)
        if not full:
            full = [self.b.start_id]  # type: ignore[list-item]
            self.ids = full[:]
        return full

    def loglikelihood(self, context: str, continuations: Sequence[str]) -> list[LoglikelihoodResult]:
        pairs = [self.b.encode_pair(context, c) for c in continuations]
        self._claim()
        out = []
        for ctx, cont in pairs:
            lps, greedy = self.b.state.score(self._base(ctx) + list(cont), len(cont))
            out.append(LoglikelihoodResult(float(sum(lps)), greedy, len(cont), tuple(lps)))
        return out

    def replay(self, context: str, continuations: Sequence[str]) -> None:
        """A finished trial's evaluations again (same calls, same chunks): the cache ends up bit-identical."""
        LlamaStream.loglikelihood(self, context, continuations)

    def replay_generate(self, context: str, until: Sequence[str] = ("\n",), max_new_tokens: int = 16,
                        skip_leading_whitespace: bool = False) -> None:
        LlamaStream.generate(self, context, until, max_new_tokens, skip_leading_whitespace)

    def generate(self, context: str, until: Sequence[str] = ("\n",), max_new_tokens: int = 16,
                 skip_leading_whitespace: bool = False) -> str:
        ctx = self.b.encode(context.rstrip(" ")) if context else ()
        self._claim()
        return self.b._greedy(self._base(ctx), until, max_new_tokens, skip_leading_whitespace)
