"""The seven held-out bad inputs that were accepted (or ended in a traceback).

Each is refused before any work, as one line naming the field or option, exit 2, nothing written.
Spec cases go through `validate` (the real command); the others through their own commands.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_refusal import refused, tree, twinlab

from experiments.spec import SpecError, bundled_spec_path, parse_spec

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "fixtures" / "lakretz2021" / "dataframe_results_all_trials.csv"


def _spec(tmp_path: Path, edit, name: str = "lakretz2021_nested") -> Path:
    data = yaml.safe_load(bundled_spec_path(name).read_text(encoding="utf-8"))
    edit(data)
    p = tmp_path / "spec.yaml"
    p.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return p


def test_a_duration_shorter_than_one_frame_is_refused_naming_the_field(tmp_path):
    p = _spec(tmp_path, lambda d: d["timing"].update(word_ms=0.001))
    refused("validate", str(p), match=["timing", "word_ms", "0.001 ms", "shorter than one frame", "240 Hz"])
    # with an expected refresh rate, one frame is that rate's: 5 ms is a third of a frame at 60 Hz
    p = _spec(tmp_path, lambda d: d["timing"].update(gap_ms=5, expected_refresh_hz=60.0))
    refused("validate", str(p), match=["gap_ms", "16.67 ms at 60 Hz"])
    # the bounds: one frame at 240 Hz (4.17 ms) passes, and 0 stays "none" where a field allows it
    data = yaml.safe_load(bundled_spec_path("lakretz2021_nested").read_text(encoding="utf-8"))
    data["timing"].update(word_ms=4.17, gap_ms=0, feedback_ms=0, iti_ms=0)
    assert parse_spec(data).timing.word_ms == 4.17
    data["timing"].update(word_ms=4.16)
    with pytest.raises(SpecError, match="word_ms: 4.16 ms"):
        parse_spec(data)


def test_a_blank_instruction_page_is_refused(tmp_path):
    for pages in ([""], ["Read this.", "  \n "]):
        p = _spec(tmp_path, lambda d, pages=pages: d["texts"].update(instructions=pages))
        refused("validate", str(p), match=["texts.instructions", f"page(s) {len(pages)}", "blank"])


def test_a_generator_and_a_file_together_are_refused_naming_both(tmp_path):
    tsv = str(ROOT / "stimuli" / "examples" / "lakretz2021_italian_example.tsv")
    both = _spec(tmp_path, lambda d: d["stimuli"].update(file=tsv, generator="nested_agreement"),
                 "lakretz2021_italian_example")
    refused("validate", str(both), match=["stimuli", "generator", "nested_agreement", "file",
                                          "lakretz2021_italian_example.tsv", "not both"])
    # the file alone, or the file with `generator: null`, is a spec
    for stimuli in ({"file": tsv}, {"file": tsv, "generator": None}):
        p = _spec(tmp_path, lambda d, stimuli=stimuli: d.update(stimuli=stimuli), "lakretz2021_italian_example")
        r = twinlab("validate", str(p))
        assert r.returncode == 0, r.stderr


def test_run_model_on_cuda_without_a_gpu_is_refused_before_any_file_is_written(tmp_path):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    out = tmp_path / "sessions"
    for device in ("cuda", "cuda:1"):
        refused("run-model", "lakretz2021_nested", "--device", device, "--trials", "2", "--out", str(out),
                match=["--device", device, "CUDA is not available", "nothing was written"])
    assert not out.exists() or tree(out) == {}


def test_a_results_table_with_only_its_header_is_one_clear_message(tmp_path):
    header = tmp_path / "results.csv"
    header.write_text(RESULTS.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    out = tmp_path / "imported"
    refused("import", "lakretz2021", "--results", str(header), "--out", str(out),
            match=[str(header), "only its header", "nothing to import"])
    assert not out.exists() or tree(out) == {}


def test_a_participant_field_given_twice_is_refused(tmp_path):
    out = tmp_path / "sessions"
    refused("run-human", "lakretz2021_nested", "--participant", "P01", "--out", str(out),
            "--info", "age=31", "--info", "age=13", match=["--info age", "twice", "age=31", "age=13"])
    assert not out.exists()


@pytest.mark.parametrize("name", ["items.json", "items", "items.txt"])
def test_stimuli_generate_writes_only_csv_or_tsv(tmp_path, name):
    out = tmp_path / name
    refused("stimuli", "generate", "--out", str(out), "--per-condition", "2",
            match=["--out", name, "CSV or TSV", ".csv, .tsv"])
    assert not out.exists() and list(tmp_path.iterdir()) == []
