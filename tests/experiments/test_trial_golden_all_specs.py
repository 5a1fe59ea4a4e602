"""Every bundled spec (Lakretz and general designs) x 3 subjects keeps its spec hash, sequence hashes,
trial-table header and the trial rows' values byte for byte (values recorded on main before `Trial`
became generic): recorded sessions stay resumable and comparable. A general design's sessions written
before its tables left the study's columns out keep that header and those values when resumed (the header
`table_columns(earlier=True)`, the rows `to_row(columns=that header)`). A trial also survives its two stored
forms: the sidecar's sequence JSON and the trial-table row."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from experiments.design_compiler import compile_sessions
from experiments.spec import load_spec
from experiments.trials import Trial, TrialSequence

SPECS = Path(__file__).resolve().parents[2] / "experiments" / "specs"

# "<spec>/<subject>/<session>": (spec hash, sequence hash, sha256[:16] of the tab-joined header,
# sha256[:16] of the JSON of every trial's to_row())
GOLDEN: dict[str, tuple[str, str, str, str]] = {
    'acceptability_rating/S01/1': ('a63cf7168c134b5c', '21dc212c0743abe6', '1e729d3095297afc', 'bc72fa6cb6d9abb6'),
    'acceptability_rating/S02/1': ('a63cf7168c134b5c', '6f733b71855e7383', '1e729d3095297afc', '1d257e39ddac170f'),
    'acceptability_rating/S03/1': ('a63cf7168c134b5c', '9a64fcbc4a0f10bb', '1e729d3095297afc', '7f0af9af64ec52d8'),
    'acceptability_yesno/S01/1': ('1421ed108c99abab', '942fd34eb24e1348', '1e729d3095297afc', 'baf1c078385d42af'),
    'acceptability_yesno/S02/1': ('1421ed108c99abab', 'd582fd8e474f41e7', '1e729d3095297afc', 'd1c7372416e4aa55'),
    'acceptability_yesno/S03/1': ('1421ed108c99abab', '4dfef7f9307a8635', '1e729d3095297afc', '2f8bb6bbc5fb8508'),
    'agreement_attraction/S01/1': ('87f6facd0c20ded9', '5e6b368e027f33c4', '397bf5e004fe4ec1', '1892df3bd83cc613'),
    'agreement_attraction/S02/1': ('87f6facd0c20ded9', 'd6681a39daedfe97', '397bf5e004fe4ec1', 'e8641a77e4874aaa'),
    'agreement_attraction/S03/1': ('87f6facd0c20ded9', '8f61a6f32a802777', '397bf5e004fe4ec1', '23a8197d35925544'),
    'cloze/S01/1': ('28faf36cd6474477', '3d663b85a5ecf610', '5e96f8f6215c5c71', '5af5e13f75c0aef2'),
    'cloze/S02/1': ('28faf36cd6474477', 'b91fe31fb7225509', '5e96f8f6215c5c71', 'c92bbffce7bb4292'),
    'cloze/S03/1': ('28faf36cd6474477', 'd40611bdfb49c907', '5e96f8f6215c5c71', 'b8c8c1b27c348f40'),
    'hu_levy2023_mandarin_2afc/S01/1': ('36643d59673b6396', 'f37dd38919ed9ca1', '65de46bee4e94da7', 'f6536e9b6c96cfbe'),
    'hu_levy2023_mandarin_2afc/S02/1': ('36643d59673b6396', '00768206e8499056', '65de46bee4e94da7', '4c1264be4ad94715'),
    'hu_levy2023_mandarin_2afc/S03/1': ('36643d59673b6396', '20b4abc39a61a6a7', '65de46bee4e94da7', 'd47fbf4e159dc77b'),
    'lakretz2021_demo/S01/1': ('7c1ead8a14ac9b7b', '120dafec0937a2b5', '219b9ca21aeff685', '987b0bbebf13d6e6'),
    'lakretz2021_demo/S02/1': ('7c1ead8a14ac9b7b', '195274d3d78d49fc', '219b9ca21aeff685', '34712547ef406853'),
    'lakretz2021_demo/S03/1': ('7c1ead8a14ac9b7b', '72a30341b804e6af', '219b9ca21aeff685', '1ad07e9b95c19fef'),
    'lakretz2021_italian_example/S01/1': (
        'a8f248a0bc6a06ec', 'fdcddb6793279cdb', '219b9ca21aeff685', 'c13f007f09372edb'),
    'lakretz2021_italian_example/S02/1': (
        'a8f248a0bc6a06ec', '27936c419545a4b7', '219b9ca21aeff685', '87c5f95078e52bec'),
    'lakretz2021_italian_example/S03/1': (
        'a8f248a0bc6a06ec', '53806b7a49313480', '219b9ca21aeff685', '059840400f2154cf'),
    'lakretz2021_nested/S01/1': ('91d1347b4fcbc6bb', '5fe1f29c0babda64', '219b9ca21aeff685', '45ffcc4af7865c58'),
    'lakretz2021_nested/S02/1': ('91d1347b4fcbc6bb', '4d4d2fdaf7b31630', '219b9ca21aeff685', 'e1f30956de28cddd'),
    'lakretz2021_nested/S03/1': ('91d1347b4fcbc6bb', '14dd2918be1f4f75', '219b9ca21aeff685', 'abf6f1b2e904bd97'),
    'lakretz2021_replication/S01/1': ('24f55166260388ee', 'adda29c8eab78bac', '219b9ca21aeff685', '05120b8f99acf2e1'),
    'lakretz2021_replication/S01/2': ('24f55166260388ee', '005d075d2b633613', '219b9ca21aeff685', '3c88c14df2f41be4'),
    'lakretz2021_replication/S02/1': ('24f55166260388ee', 'c45112296ce609cd', '219b9ca21aeff685', 'ee623ecae36c43e6'),
    'lakretz2021_replication/S02/2': ('24f55166260388ee', '92f13868496fe4ae', '219b9ca21aeff685', 'fe68446e7fe605cb'),
    'lakretz2021_replication/S03/1': ('24f55166260388ee', '1943d3c14a53a6b3', '219b9ca21aeff685', '496a68f2e7338ab5'),
    'lakretz2021_replication/S03/2': ('24f55166260388ee', '2347abe8d40d1735', '219b9ca21aeff685', '951b0a71490c66c1'),
    'lexical_decision/S01/1': ('e07f858a84e7311f', '9106d21e05ae2bd2', '7e6705dee2da5d46', '62f50866294659b6'),
    'lexical_decision/S02/1': ('e07f858a84e7311f', '130d8defce05c94e', '7e6705dee2da5d46', '5daf5ead0bee3c65'),
    'lexical_decision/S03/1': ('e07f858a84e7311f', '5f467c13c5bcd429', '7e6705dee2da5d46', 'aa11d79d07da7158'),
    'minimal_pairs_2afc/S01/1': ('daae26b1e71309c6', '4fea61789553ac7a', '65de46bee4e94da7', 'eeae1f5e97b67781'),
    'minimal_pairs_2afc/S02/1': ('daae26b1e71309c6', 'a242b555ab414018', '65de46bee4e94da7', '899c9da7d5ed9799'),
    'minimal_pairs_2afc/S03/1': ('daae26b1e71309c6', 'f403976caeb303c3', '65de46bee4e94da7', '5f21b087f09312db'),
    'self_paced_reading/S01/1': ('7fd87a5038febd1f', 'ab73d2cbf50531d0', '6964eab35b682d69', 'e8941ee75921a937'),
    'self_paced_reading/S02/1': ('7fd87a5038febd1f', 'cd5474cae8a24050', '6964eab35b682d69', '205ce7047d41edfc'),
    'self_paced_reading/S03/1': ('7fd87a5038febd1f', '93eddef9984a3dc3', '6964eab35b682d69', 'bc7640b1c4ebe5f8'),
    # bundled later (recorded when added)
    'lakretz2021_forced_choice/S01/1': ('058e0ce1983de8ad', 'f4348f9d77ef9bd5', '219b9ca21aeff685', '428a71d0f8770232'),
    'lakretz2021_forced_choice/S02/1': ('058e0ce1983de8ad', '48ca463bb2ec087a', '219b9ca21aeff685', '7e737dc9be2ee3d2'),
    'lakretz2021_forced_choice/S03/1': ('058e0ce1983de8ad', 'ceae154a049b47f3', '219b9ca21aeff685', '55308954991e7c7b'),
    'maze/S01/1': ('89a4b7b8c907d51f', 'dda7d26f3ca1f875', 'c2476924e822bb19', 'e36b1cfa3a754242'),
    'maze/S02/1': ('89a4b7b8c907d51f', 'b60bf8255fa2946d', 'c2476924e822bb19', '585dacbebf4c7c52'),
    'maze/S03/1': ('89a4b7b8c907d51f', 'ec2ad2c8abb479f1', 'c2476924e822bb19', '3842075a22a300db'),
}


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _sessions(name: str) -> list[TrialSequence]:
    exp = load_spec(SPECS / f"{name}.yaml")
    return [seq for sub in ("S01", "S02", "S03") for seq in compile_sessions(exp, sub)]


def test_every_bundled_spec_is_covered():
    assert {k.split("/")[0] for k in GOLDEN} == {p.stem for p in SPECS.glob("*.yaml")}


@pytest.mark.parametrize("name", sorted({k.split("/")[0] for k in GOLDEN}))
def test_hashes_header_and_rows_unchanged(name):
    exp = load_spec(SPECS / f"{name}.yaml")
    for seq in _sessions(name):
        key = f"{name}/{seq.subject_id}/{seq.session}"
        header = seq.table_columns(earlier=True)
        rows = [t.to_row(columns=header) for t in seq.trials]
        got = (exp.spec_hash, seq.sequence_hash, _h("\t".join(header)),
               _h(json.dumps(rows, sort_keys=True, default=str, ensure_ascii=False)))
        assert got == GOLDEN[key], key


@pytest.mark.parametrize("name", sorted({k.split("/")[0] for k in GOLDEN}))
def test_trials_survive_sequence_json_and_table_row(name):
    for seq in _sessions(name):
        back = TrialSequence.from_json(seq.to_json())
        assert back.trials == seq.trials and back.sequence_hash == seq.sequence_hash
        for t in seq.trials:
            row = {k: ("" if v is None else v) for k, v in t.to_row().items()}  # as a CSV reader gives it
            if "critical_index" in row:  # a study's own trial
                row["critical_index"] = int(row["critical_index"])
            names = list((seq.design or {}).get("factors") or ())  # a row keeps them in their own columns
            assert Trial.from_dict(row, names).hashed_dict() == t.hashed_dict(), (name, t.trial_index)
