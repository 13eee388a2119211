"""The tuner keeps the fastest config per key, merges re-runs, and the kernels' launcher uses its table.

No GPU here: compiling and timing are replaced by stand-ins (a config "fails to compile" or takes a
time computed from its tiles); everything else — task enumeration with shared-memory pruning, the
choice, the files, the lookup by GPU name and N bucket — is the real code.
"""

import json

import pytest
import torch

from benchmarks import tune
from course.reference import flash_triton
from course.reference import triton_configs as configs

GPU = "Fake GPU 80GB"
BROKEN = configs.KernelConfig(128, 128, 8, 4)


def fake_ms(task) -> float:
    """Bigger key tiles win at long N, 8 warps win at d = 128; a different best per key."""
    kernel, bits, d, causal, n, config = task
    ms = 10.0 / config.block_q + (1.0 / config.block_k if n > 1024 else config.block_k / 1000)
    return ms - (0.5 if d == 128 and config.num_warps == 8 else 0.0) + config.num_stages / 1000


def fake_runner(kernel, causal, *tensors):
    """Runs the launch "compiled" for the forced config: the BROKEN one runs out of resources."""

    def run():
        if flash_triton._forced_configs[kernel] == BROKEN:
            raise RuntimeError("out of resources: shared memory")

    return run


@pytest.fixture
def fake_gpu(monkeypatch, tmp_path):
    monkeypatch.setattr(configs, "max_shared_memory", lambda index: 232448)
    monkeypatch.setattr(configs, "device_name", lambda index: GPU)
    monkeypatch.setattr(configs, "TUNED_DIR", tmp_path / "tuned")
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *args: GPU)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(tune, "inputs", lambda bits, d, n, small: (None,) * 4)
    monkeypatch.setattr(tune, "runner", fake_runner)
    monkeypatch.setattr(tune, "time_one", fake_ms)
    configs.tuned_table.cache_clear()
    yield tmp_path
    configs.tuned_table.cache_clear()


def test_tuner_keeps_the_fastest_fitting_config_per_key(fake_gpu):
    path = tune.tune(fake_gpu / "out", bits_list=(16,), head_dims=(64, 128), jobs=1)
    table = json.loads(path.read_text())["configs"]
    tasks = tune.tasks((16,), (64, 128))
    assert set(table) == {tune.key_of(t) for t in tasks}
    for key, entry in table.items():
        candidates = [t for t in tasks if tune.key_of(t) == key and t[-1] != BROKEN]
        fastest = min(candidates, key=fake_ms)
        assert entry["config"] == fastest[-1].__dict__
        assert entry["ms"] == pytest.approx(fake_ms(fastest), abs=1e-4)
    failed = json.loads((fake_gpu / "out" / "tuning_failures.json").read_text())["failed"]
    assert failed and all(r["config"] == BROKEN.__dict__ and "out of resources" in r["error"] for r in failed)
    # configs whose shared memory does not fit are never tried: 16-bit d=128 with 128×128 tiles, 4 stages
    timings = json.loads((fake_gpu / "out" / "tuning.json").read_text())["timings"]
    assert not any(r["key"].startswith("forward/d128") and r["config"] == BROKEN.__dict__ for r in timings)


def test_a_rerun_replaces_only_its_own_keys(fake_gpu):
    tune.tune(fake_gpu / "out", bits_list=(16,), head_dims=(64,), jobs=1)
    path = tune.tune(fake_gpu / "out", bits_list=(16,), head_dims=(128,), jobs=1)
    keys = json.loads(path.read_text())["configs"]
    assert any("/d64/" in k for k in keys) and any("/d128/" in k for k in keys)
    timings = json.loads((fake_gpu / "out" / "tuning.json").read_text())["timings"]
    runnable = [t for t in tune.tasks((16,), (64, 128)) if t[-1] != BROKEN]
    assert sorted(r["key"] for r in timings) == sorted(tune.key_of(t) for t in runnable)


def test_launcher_tries_the_tuned_config_first_for_its_key(fake_gpu):
    tune.tune(fake_gpu / "out", bits_list=(16,), head_dims=(128,), jobs=1)
    gpu = torch.device("cuda", 0)
    table = configs.tuned_table(GPU)
    for dtype in (torch.float16, torch.bfloat16):  # the two 16-bit types share entries
        for causal, n in ((False, 1000), (True, 3000), (False, 100_000)):
            first = configs.candidate_configs("forward", 128, dtype, gpu, causal, n)[0]
            assert first == table[configs.tuning_key("forward", 128, dtype, causal, n)]
            assert first.num_warps == 8
    # untuned keys (here d = 64) fall back to the built-in order
    assert configs.candidate_configs("dq", 64, torch.float16, gpu) == configs._GPU_CANDIDATES[16]["dq"]


def test_n_buckets_and_keys():
    assert [configs.n_bucket(n) for n in (1, 1024, 1025, 4096, 16384, 10**6)] == [
        1024, 1024, 4096, 4096, 16384, 16384,
    ]  # fmt: skip
    assert configs.tuning_key("dkdv", 64, torch.float32, True, 2000) == "dkdv/d64/32bit/causal/n<=4096"
    assert configs.device_slug("NVIDIA H100 80GB HBM3") == "nvidia_h100_80gb_hbm3"


def test_committed_tables_parse_and_fit_their_gpu():
    """Every committed table entry is a config of the search space that fits an H100's shared memory."""
    tables = sorted(configs.TUNED_DIR.glob("*.json"))
    assert tables, "no committed tuning table"
    for path in tables:
        device = json.loads(path.read_text())["device"]
        table = configs.tuned_table(device)
        assert table and configs.device_slug(device) == path.stem
        for key, config in table.items():
            kernel, d, bits, mask, bucket = key.split("/")
            assert mask in ("causal", "full") and int(bucket.removeprefix("n<=")) in configs.N_BUCKETS
            assert config in configs.SEARCH_SPACE[int(bits.removesuffix("bit"))][kernel]
            size = int(bits.removesuffix("bit")) // 8
            assert configs.shared_memory_estimate(kernel, config, int(d.removeprefix("d")), size) <= 232448
