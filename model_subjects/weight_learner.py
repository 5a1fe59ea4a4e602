"""One subject's own weights on the transformers backend: reset to the frozen model, stepped, hashed, restored.

Full fine-tuning updates the backend's model in place; the frozen weights are copied once per run and
copied back before each subject (so subjects never share updated weights) and when the run ends (so the
backend the caller holds is the frozen model again). LoRA (`peft`) injects a fresh adapter per subject
into a copy of the model that the backend scores with for the run, and hashes the adapter alone.
torch is imported by the backend already; this module only runs where a model is loaded.
"""
from __future__ import annotations

import copy
import hashlib
from typing import Any

from model_subjects.requests import LoglikelihoodRequest
from model_subjects.weights import LearningSettings


class WeightLearner:
    """The weights one subject answers with; `start(seed)` before each subject, `close()` when the run ends."""

    def __init__(self, backend: Any, settings: LearningSettings):
        self.b = backend
        self.torch = backend.torch
        self.s = settings
        self.frozen_model = backend.model
        self._deterministic_before = self.torch.are_deterministic_algorithms_enabled()
        self.torch.use_deterministic_algorithms(True)
        if settings.adapter == "lora":
            self.model = self._lora_model()
            backend.model = self.model
        else:
            self.model = backend.model
        self.params = [p for n, p in self.model.named_parameters() if settings.adapter != "lora" or "lora_" in n]
        self._base = [p.detach().clone() for p in self.params]
        self.base_sha256 = (digest_of(self.frozen_model.parameters(), self.torch) if settings.adapter == "lora"
                            else self.digest())
        self.opt: Any = None

    def _lora_model(self) -> Any:
        from peft import LoraConfig, inject_adapter_in_model  # peft loads only for adapters

        model = copy.deepcopy(self.frozen_model)
        cfg = LoraConfig(r=self.s.rank, lora_alpha=2 * self.s.rank, lora_dropout=0.0, bias="none",
                         target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
        model = inject_adapter_in_model(cfg, model)
        for name, p in model.named_parameters():  # the frozen weights get no gradients
            p.requires_grad_("lora_" in name)
        model.eval()
        return model

    def start(self, seed: int) -> None:
        """A fresh subject: the frozen weights (a new adapter, drawn with `seed`), a new optimizer."""
        torch = self.torch
        torch.manual_seed(seed)
        with torch.no_grad():
            if self.s.adapter == "lora":
                for name, p in self.model.named_parameters():
                    if "lora_A" in name:
                        torch.nn.init.kaiming_uniform_(p, a=5 ** 0.5)
                    elif "lora_B" in name:
                        p.zero_()
            else:
                for p, base in zip(self.params, self._base, strict=False):
                    p.copy_(base)
        for p in self.params:
            p.grad = None
        if self.s.optimizer == "adamw":
            self.opt = torch.optim.AdamW(self.params, lr=float(self.s.lr), betas=(0.9, 0.999), eps=1e-8,
                                         weight_decay=0.01, foreach=False)
        else:
            self.opt = torch.optim.SGD(self.params, lr=float(self.s.lr), momentum=0.0, weight_decay=0.0, foreach=False)

    def close(self) -> None:
        """The backend scores with the frozen model again (its weights restored, any adapter model dropped)."""
        torch = self.torch
        with torch.no_grad():
            if self.s.adapter != "lora":
                for p, base in zip(self.params, self._base, strict=False):
                    p.copy_(base)
                    p.grad = None
        self.b.model = self.frozen_model
        self._base = []
        self.opt = None
        torch.use_deterministic_algorithms(self._deterministic_before)

    def digest(self) -> str:
        """SHA-256 of the trainable weights' bytes, in parameter order (the whole model, or the adapter)."""
        return digest_of(self.params, self.torch)

    # ------------------------------------------------------------------ steps
    def units(self, context: str, target: str) -> tuple[tuple[int, ...], int]:
        """(token ids, number of target tokens at the end), tokenised as the backend scores (context, target)."""
        u = self.b._units([LoglikelihoodRequest(context, target)])[0]
        return u.full, u.n_cont

    def train(self, ids: tuple[int, ...], n_target: int) -> list[float]:
        """`steps` optimizer steps on the mean cross-entropy of the last `n_target` tokens of `ids`;
        returns the loss before each step (the first: the loss under the weights that just answered)."""
        torch = self.torch
        x = torch.tensor([list(ids[:-1])], device=self.b.input_device)
        y = torch.tensor(list(ids[-n_target:]), device=self.b.input_device)
        losses = []
        with torch.enable_grad():
            for _ in range(self.s.steps):
                logits = self.model(input_ids=x, logits_to_keep=n_target).logits[0].float()
                loss = torch.nn.functional.cross_entropy(logits, y)
                losses.append(float(loss.detach()))
                loss.backward()
                self.opt.step()
                self.opt.zero_grad(set_to_none=True)
        return losses


def digest_of(params: Any, torch: Any) -> str:
    """SHA-256 of tensors' raw bytes (any dtype), in the order given."""
    h = hashlib.sha256()
    for p in params:
        t = p.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        h.update(memoryview(t.contiguous().view(-1).view(torch.uint8).numpy()))
    return h.hexdigest()
