"""Tests of the `lagom` Python package (shim/python/lagom), run by ctest through Debian's pytest.

Environment from tests/shim/CMakeLists.txt: PYTHONPATH (the package), LAGOM_LIB_DIR (the built plugin),
LAGOM_TEST_DATA_DIR (tests/data). The fixture tests/data/shim/tune-out is what `lagom tune` writes.
"""

import ctypes
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import types
import warnings

import pytest

import lagom

DATA_DIR = os.environ.get("LAGOM_TEST_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "data"))
FIXTURE = os.path.join(DATA_DIR, "shim", "tune-out")
LIB_DIR = os.environ.get("LAGOM_LIB_DIR", "")
BIN_DIR = os.environ.get("LAGOM_BIN_DIR", "")

# Every variable lagom.env may set or lagom.init reads, cleared before each test.
TOUCHED = [
    "NCCL_TUNER_PLUGIN", "LAGOM_TUNER_CONFIG", "LAGOM_CONFIG_DIR", "LAGOM_TUNER_PLUGIN_PATH",
    "NCCL_NTHREADS", "NCCL_BUFFSIZE", "NCCL_P2P_NET_CHUNKSIZE", "NCCL_TUNER_CONFIG_FILE",
]


def _torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in TOUCHED:
        monkeypatch.delenv(name, raising=False)
    # No plugin next to the package unless a test puts one there.
    monkeypatch.setattr(lagom, "_plugin_candidates", lambda: [])
    # A fake torch.distributed left by a test goes; a real one stays (importing it twice aborts torch).
    if not hasattr(sys.modules.get("torch.distributed"), "__file__"):
        monkeypatch.delitem(sys.modules, "torch.distributed", raising=False)


@pytest.fixture
def tuned(tmp_path):
    """A copy of the fixture, as a user's `lagom tune --out` directory."""
    target = tmp_path / "tuned"
    shutil.copytree(FIXTURE, target)
    return str(target)


def test_init_exports_the_variables_of_lagom_env(tuned):
    applied = lagom.init(tuned)
    assert applied == {
        "NCCL_TUNER_PLUGIN": "lagom",
        "LAGOM_TUNER_CONFIG": os.path.join(tuned, "nccl_tuner.conf"),
        "NCCL_NTHREADS": "256",
        "NCCL_BUFFSIZE": "8388608",
        "NCCL_P2P_NET_CHUNKSIZE": "262144",
        "LAGOM_CONFIG_DIR": tuned,
    }
    assert list(applied)[0] == "LAGOM_CONFIG_DIR"  # the file's first assignment
    for name, value in applied.items():
        assert os.environ[name] == value


def test_variables_set_by_the_user_win_unless_override(tuned, monkeypatch):
    monkeypatch.setenv("NCCL_NTHREADS", "512")
    monkeypatch.setenv("NCCL_BUFFSIZE", "8388608")  # same value: no warning about it
    with pytest.warns(RuntimeWarning) as caught:
        applied = lagom.init(tuned)
    assert "NCCL_NTHREADS" not in applied and "NCCL_BUFFSIZE" not in applied
    assert os.environ["NCCL_NTHREADS"] == "512"
    messages = [str(w.message) for w in caught]
    assert messages == [
        "lagom.init: kept variables already set in the environment (pass override=True to use lagom's): "
        "NCCL_NTHREADS=512 (lagom: 256)"
    ]
    applied = lagom.init(tuned, override=True)
    assert applied["NCCL_NTHREADS"] == "256"
    assert os.environ["NCCL_NTHREADS"] == "256"


def test_plugin_path_comes_from_lagom_tuner_plugin_path(tuned, monkeypatch, tmp_path):
    plugin = tmp_path / "libnccl-tuner-lagom.so"
    plugin.write_bytes(b"")
    monkeypatch.setenv("LAGOM_TUNER_PLUGIN_PATH", str(plugin))
    assert lagom.init(tuned)["NCCL_TUNER_PLUGIN"] == str(plugin)


def test_plugin_next_to_the_package_is_used_by_full_path(tuned, monkeypatch, tmp_path):
    plugin = tmp_path / "pkg" / "libnccl-tuner-lagom.so"
    plugin.parent.mkdir()
    plugin.write_bytes(b"")
    monkeypatch.setattr(lagom, "_plugin_candidates", lambda: [str(tmp_path / "missing.so"), str(plugin)])
    assert lagom.init(tuned)["NCCL_TUNER_PLUGIN"] == str(plugin)


def test_an_absolute_existing_plugin_path_in_lagom_env_is_kept(tuned, tmp_path):
    plugin = tmp_path / "libnccl-tuner-lagom.so"
    plugin.write_bytes(b"")
    with open(os.path.join(tuned, "lagom.env"), "a", encoding="utf-8") as handle:
        handle.write("export NCCL_TUNER_PLUGIN=%s\n" % plugin)
    assert lagom.init(tuned)["NCCL_TUNER_PLUGIN"] == str(plugin)


def test_warns_when_torch_distributed_is_already_initialised(tuned, monkeypatch):
    fake = types.ModuleType("torch.distributed")
    fake.is_available = lambda: True
    fake.is_initialized = lambda: True
    monkeypatch.setitem(sys.modules, "torch.distributed", fake)
    with pytest.warns(RuntimeWarning, match=r"lagom.init\(\) called after torch.distributed was initialised"):
        lagom.init(tuned)
    assert os.environ["NCCL_TUNER_PLUGIN"] == "lagom"  # still applied, for communicators created later


def test_no_warning_before_torch_distributed_is_initialised(tuned, monkeypatch):
    fake = types.ModuleType("torch.distributed")
    fake.is_available = lambda: True
    fake.is_initialized = lambda: False
    monkeypatch.setitem(sys.modules, "torch.distributed", fake)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lagom.init(tuned)


def test_missing_directory_or_env_file_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="lagom.init: config directory not found: .*nope"):
        lagom.init(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match=r"lagom.env not found \(write it with `lagom tune --out "):
        lagom.init(tmp_path)


def test_missing_tuner_conf_is_a_warning(tuned):
    os.remove(os.path.join(tuned, "nccl_tuner.conf"))
    with pytest.warns(RuntimeWarning, match="nccl_tuner.conf does not exist; NCCL will keep its own choices"):
        lagom.init(tuned)


@pytest.mark.parametrize(
    "line, why",
    [
        ("export NCCL_NTHREADS", "expected 'export NAME=VALUE', got 'export NCCL_NTHREADS'"),
        ("export 1NCCL=3", "invalid variable name '1NCCL'"),
        ("export NCCL_NET=$(reboot)", "value of NCCL_NET must be a plain word or a single-quoted string"),
        ("export NCCL_NET=\"IB\"", "value of NCCL_NET must be a plain word or a single-quoted string"),
        ("export NCCL_NET='IB", "value of NCCL_NET must be a plain word or a single-quoted string"),
        ("NCCL_NET=IB # comment", "value of NCCL_NET must be a plain word or a single-quoted string"),
    ],
)
def test_malformed_lagom_env_names_file_and_line(tuned, line, why):
    path = os.path.join(tuned, "lagom.env")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    with pytest.raises(ValueError) as error:
        lagom.init(tuned)
    assert str(error.value).startswith("%s:9: %s" % (path, why))
    assert "NCCL_NTHREADS" not in os.environ  # nothing applied from a bad file


def test_lagom_env_means_the_same_to_a_shell(tuned):
    """`source lagom.env` in bash assigns exactly what read_env_file returns."""
    path = os.path.join(tuned, "lagom.env")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n# a comment\nNCCL_SOCKET_IFNAME='eth0,eth1'\nexport NCCL_IB_HCA=^mlx5_0:1\n")
    pairs = lagom.read_env_file(path)
    script = 'set -a; source "$1"; ' + "; ".join('printf "%%s\\0" "$%s"' % name for name, _ in pairs)
    result = subprocess.run(["bash", "-c", script, "bash", path], capture_output=True, check=True, env={})
    assert result.stdout.decode().split("\0")[:-1] == [value for _, value in pairs]
    assert ("NCCL_SOCKET_IFNAME", "eth0,eth1") in pairs


def test_a_byte_order_mark_is_ignored_and_bytes_that_are_not_utf8_name_file_and_line(tuned):
    path = os.path.join(tuned, "lagom.env")
    with open(path, "rb") as handle:
        text = handle.read()
    with open(path, "wb") as handle:
        handle.write(b"\xef\xbb\xbf" + text)
    assert lagom.read_env_file(path)[0] == ("LAGOM_CONFIG_DIR", tuned)
    with open(path, "wb") as handle:
        handle.write(text + b"export NCCL_NET=caf\xe9\n")
    with pytest.raises(ValueError, match=r"lagom.env:9: not UTF-8 text \(byte 20"):
        lagom.read_env_file(path)


def test_a_config_dir_path_before_the_line_that_sets_it_is_refused(tmp_path):
    path = tmp_path / "lagom.env"
    path.write_text('export LAGOM_TUNER_CONFIG="${LAGOM_CONFIG_DIR}/nccl_tuner.conf"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"lagom.env:1: LAGOM_TUNER_CONFIG uses \$\{LAGOM_CONFIG_DIR\} before"):
        lagom.read_env_file(str(path))


@pytest.mark.skipif(not BIN_DIR, reason="LAGOM_BIN_DIR is not set (ctest sets it to <build>/bin)")
def test_a_moved_tune_output_points_at_its_own_files(tmp_path):
    """tune --out A; copy A to B; delete A: lagom.init(B) and `source B/lagom.env` both use B's files."""
    original = tmp_path / "lagom-out"
    tune = subprocess.run([os.path.join(BIN_DIR, "lagom"), "tune", "--model", "gpt2", "--cluster", "dgx-a100",
                           "--gpus", "16", "--global-batch", "64", "--out", str(original), "--quiet"],
                          capture_output=True, timeout=120)
    assert tune.returncode == 0, tune.stderr.decode()
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(original, copy)
    shutil.rmtree(original)
    applied = lagom.init(str(copy))
    assert applied["LAGOM_CONFIG_DIR"] == str(copy)
    assert applied["LAGOM_TUNER_CONFIG"] == str(copy / "nccl_tuner.conf")
    script = 'source "$1"; printf "%s\\n%s\\n" "$LAGOM_CONFIG_DIR" "$LAGOM_TUNER_CONFIG"'
    shell = subprocess.run(["bash", "-c", script, "bash", str(copy / "lagom.env")], capture_output=True,
                           check=True, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, cwd="/")
    assert shell.stdout.decode().splitlines() == [str(copy), str(copy / "nccl_tuner.conf")]


def test_the_variables_init_sets_lead_the_plugin_to_the_tuned_rules(tuned, monkeypatch):
    """lagom.init -> environment -> the built plugin (as NCCL would dlopen it) applies nccl_tuner.conf."""
    if not LIB_DIR:
        pytest.skip("LAGOM_LIB_DIR is not set (ctest sets it to <build>/lib)")
    plugin_path = os.path.join(LIB_DIR, "libnccl-tuner-lagom.so")
    assert os.path.isfile(plugin_path), "the plugin is not built"
    monkeypatch.setenv("LAGOM_TUNER_PLUGIN_PATH", plugin_path)
    lagom.init(tuned)
    library = ctypes.CDLL(os.environ["NCCL_TUNER_PLUGIN"])

    class TunerV5(ctypes.Structure):
        _fields_ = [
            ("name", ctypes.c_char_p),
            ("init", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint64,
                                      ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_void_p)),
            ("getCollInfo", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t,
                                             ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                             ctypes.c_int, ctypes.POINTER(ctypes.c_int))),
            ("finalize", ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)),
        ]

    tuner = TunerV5.in_dll(library, "ncclTunerPlugin_v5")
    assert tuner.name == b"lagom"
    context = ctypes.c_void_p()
    assert tuner.init(ctypes.byref(context), 1, 16, 2, None, None, None) == 0
    table = (ctypes.c_float * 21)(*([100.0] * 21))  # float[7][3], contiguous
    channels = ctypes.c_int(0)
    assert tuner.getCollInfo(context, 4, 1024, 1, ctypes.addressof(table), 7, 3, 0, ctypes.byref(channels)) == 0
    assert table[0 * 3 + 0] == 0.0  # nccl_tuner.conf line 2: allreduce <= 65535 bytes -> tree/ll
    assert sum(1 for value in table if value == 100.0) == 20
    assert channels.value == 4
    assert tuner.finalize(context) == 0


def _write_config(directory, document):
    with open(os.path.join(directory, "lagom-config.json"), "w", encoding="utf-8") as handle:
        json.dump(document, handle)


class _FakeNcclConfig:
    pass


class _FakeOptions:
    def __init__(self):
        self.config = _FakeNcclConfig()


def _fake_torch_with_nccl(monkeypatch, nccl=True, with_config=True):
    """A torch.distributed with the attributes process_group_options reads (real torch with NCCL is tested
    below where one is installed)."""
    torch = types.ModuleType("torch")
    dist = types.ModuleType("torch.distributed")
    dist.is_nccl_available = lambda: nccl
    if nccl:
        dist.ProcessGroupNCCL = types.SimpleNamespace(Options=_FakeOptions if with_config else object)
    torch.distributed = dist
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.distributed", dist)


def test_process_group_options_is_torchs_options_object_for_the_default_and_a_named_group(tuned, monkeypatch):
    _fake_torch_with_nccl(monkeypatch)
    lagom.init(tuned)
    default = lagom.process_group_options()
    assert isinstance(default, _FakeOptions)
    assert (default.config.min_ctas, default.config.max_ctas) == (8, 16)  # the file's "default" entry
    tp = lagom.process_group_options("tp")
    assert (tp.config.min_ctas, tp.config.max_ctas) == (4, 8)
    dp = lagom.process_group_options("dp", config_dir=FIXTURE)
    assert dp.config.max_ctas == 2 and not hasattr(dp.config, "min_ctas")


def test_the_default_group_is_dp_when_the_file_has_no_default_entry(tuned, monkeypatch):
    """What tune writes: no "default" communicator; DDP/FSDP's group is the data-parallel one."""
    _fake_torch_with_nccl(monkeypatch)
    _write_config(tuned, {"communicators": [{"group": "dp", "min_ctas": 2, "max_ctas": 2}]})
    options = lagom.process_group_options(config_dir=tuned)
    assert lagom.DEFAULT_GROUP == "dp"
    assert (options.config.min_ctas, options.config.max_ctas) == (2, 2)


def test_a_group_the_file_does_not_have_is_none_with_a_warning(tuned, monkeypatch):
    _fake_torch_with_nccl(monkeypatch)
    with pytest.warns(RuntimeWarning, match=r"no communicator 'ep' \(it has: default, dp, tp\)"):
        assert lagom.process_group_options("ep", config_dir=tuned) is None


@pytest.mark.parametrize(
    "setup, why",
    [
        (lambda mp: mp.setitem(sys.modules, "torch", None), "torch is not installed"),
        (lambda mp: _fake_torch_with_nccl(mp, nccl=False), r"this torch has no NCCL"),
        (lambda mp: _fake_torch_with_nccl(mp, with_config=False), r"cannot set NCCL CTA limits \(torch >= 2.1"),
    ],
)
def test_without_nccl_options_in_torch_it_is_none_never_a_dict(tuned, monkeypatch, setup, why):
    setup(monkeypatch)
    with pytest.warns(RuntimeWarning, match=why):
        assert lagom.process_group_options("tp", config_dir=tuned) is None


@pytest.mark.skipif(not _torch_available(), reason="torch is not installed (Debian: python3-torch)")
def test_with_the_installed_torch_the_result_is_what_torch_takes(tuned):
    """Debian's torch is CPU-only: None and a warning. A torch with NCCL: its own Options type."""
    import torch.distributed as dist
    lagom.init(tuned)
    if not dist.is_nccl_available():
        with pytest.warns(RuntimeWarning, match="this torch has no NCCL"):
            assert lagom.process_group_options("tp") is None
        return
    options = lagom.process_group_options("tp")
    assert isinstance(options, dist.ProcessGroupNCCL.Options)
    assert (options.config.min_ctas, options.config.max_ctas) == (4, 8)


def test_process_group_options_needs_a_config_dir():
    with pytest.raises(RuntimeError, match=r"call lagom.init\(config_dir\) first or pass config_dir"):
        lagom.process_group_options("tp")


def test_process_group_options_without_lagom_config_json_is_none_and_a_warning(tuned):
    os.remove(os.path.join(tuned, "lagom-config.json"))
    with pytest.warns(RuntimeWarning, match="lagom-config.json not found; NCCL keeps its default CTA limits"):
        assert lagom.process_group_options("tp", config_dir=tuned) is None


@pytest.mark.parametrize(
    "document, why",
    [
        ({"communicators": {"tp": 1}}, "'communicators' must be a list"),
        ({"communicators": [{"min_ctas": 2}]}, r"communicators\[0\]: needs a 'group' name"),
        ({"communicators": [{"group": "tp", "max_ctas": 65}]}, r"max_ctas must be an integer in 1..64, got 65"),
        ({"communicators": [{"group": "tp", "min_ctas": "4"}]}, r"min_ctas must be an integer in 1..64, got '4'"),
        ({"communicators": [{"group": "tp", "min_ctas": 8, "max_ctas": 4}]}, "min_ctas 8 is above max_ctas 4"),
    ],
)
def test_malformed_lagom_config_json_raises(tuned, document, why):
    _write_config(tuned, document)
    with pytest.raises(ValueError, match=why):
        lagom.process_group_options("tp", config_dir=tuned)


def test_megatron_communicator_config_is_megatron_yaml(tuned):
    # Lagom's "dp" (data parallel with CP) is Megatron-Core's "dp_cp": the group its gradient buckets use.
    assert lagom.megatron_communicator_config(tuned) == textwrap.dedent(
        """\
        default:
          min_ctas: 8
          max_ctas: 16
        tp:
          min_ctas: 4
          max_ctas: 8
        dp_cp:
          max_ctas: 2
        """
    )


@pytest.mark.skipif(not _torch_available(), reason="torch is not installed (Debian: python3-torch); "
                    "the two-process torch.distributed test needs it")
def test_init_then_a_real_two_process_gloo_group(tuned, tmp_path):
    """What a user's script does: lagom.init, then init_process_group; both ranks see the tuned settings."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(
        """\
        import os, sys
        import lagom
        lagom.init(sys.argv[1])
        import torch, torch.distributed as dist
        rank = int(sys.argv[2])
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%s" % sys.argv[3], rank=rank, world_size=2)
        total = torch.tensor([rank + 1.0])
        dist.all_reduce(total)
        print(os.environ["NCCL_NTHREADS"], os.environ["LAGOM_TUNER_CONFIG"], int(total.item()))
        dist.destroy_process_group()
        """
    ))
    env = dict(os.environ)
    ranks = [subprocess.Popen([sys.executable, str(script), tuned, str(rank), str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for rank in range(2)]
    for rank in ranks:
        out, err = rank.communicate(timeout=120)
        assert rank.returncode == 0, err.decode()
        assert out.decode().split() == ["256", os.path.join(tuned, "nccl_tuner.conf"), "3"]


def _torch_config(tuned, settings):
    _write_config(tuned, {"communicators": [], "framework": {"name": "torch-fsdp", "torch": settings}})


def test_torch_kwargs_are_the_wrapper_keyword_arguments_tune_wrote(tuned):
    _torch_config(tuned, {"wrapper": "ddp", "ddp": {"bucket_cap_mb": 47.6837158203125},
                          "fully_shard": {}})
    lagom.init(tuned)
    kwargs = lagom.torch_kwargs()
    assert kwargs == {"bucket_cap_mb": 47.6837158203125}
    kwargs["bucket_cap_mb"] = 1  # a new dict each call: the caller may change it
    assert lagom.torch_kwargs("ddp") == {"bucket_cap_mb": 47.6837158203125}
    assert lagom.torch_kwargs("fully_shard", config_dir=tuned) == {}


def test_torch_kwargs_default_wrapper_is_the_strategys(tuned):
    _torch_config(tuned, {"wrapper": "fully_shard", "ddp": {}, "fully_shard": {"reshard_after_forward": True},
                          "prefetch_layers": 2})
    assert lagom.torch_kwargs(config_dir=tuned) == {"reshard_after_forward": True}


def test_torch_kwargs_without_torch_settings_are_empty_with_a_warning(tuned, tmp_path):
    with pytest.warns(RuntimeWarning, match=r"was not tuned for torch \(run `lagom tune --framework torch-fsdp`\)"):
        assert lagom.torch_kwargs(config_dir=tuned) == {}  # the fixture has no framework section
    with pytest.warns(RuntimeWarning, match="lagom-config.json not found; torch keeps its defaults"):
        assert lagom.torch_kwargs(config_dir=str(tmp_path)) == {}


@pytest.mark.parametrize(
    "settings, wrapper, why",
    [
        ({"wrapper": "ddp", "ddp": {}}, "fsdp", r"wrapper must be one of ddp, fully_shard, got 'fsdp'"),
        ({"wrapper": "zero", "ddp": {}}, None, r"framework.torch.wrapper must be one of ddp, fully_shard"),
        ({"wrapper": "ddp", "ddp": [1]}, None, r"framework.torch.ddp must be an object of keyword arguments"),
        ("ddp", None, r"framework.torch must be an object"),
    ],
)
def test_malformed_torch_settings_raise(tuned, settings, wrapper, why):
    _torch_config(tuned, settings)
    with pytest.raises(ValueError, match=why):
        lagom.torch_kwargs(wrapper, config_dir=tuned)


@pytest.mark.skipif(not BIN_DIR, reason="needs the built lagom (LAGOM_BIN_DIR)")
def test_torch_kwargs_of_a_real_tune_are_accepted_by_the_wrapper_signatures(tmp_path):
    """What `lagom tune --framework torch-fsdp` writes, read back; with torch installed, DDP's signature takes it."""
    out = tmp_path / "out"
    subprocess.run([os.path.join(BIN_DIR, "lagom"), "tune", "--model", "gpt2", "--cluster", "dgx-h100", "--gpus",
                    "16", "--global-batch", "64", "--zero", "0", "--framework", "torch-fsdp", "--out", str(out), "--quiet"],
                   check=True, stdout=subprocess.DEVNULL)
    kwargs = lagom.torch_kwargs(config_dir=str(out))
    assert set(kwargs) == {"bucket_cap_mb"} and kwargs["bucket_cap_mb"] > 0
    if _torch_available():
        import inspect
        from torch.nn.parallel import DistributedDataParallel
        inspect.signature(DistributedDataParallel).bind_partial(None, **kwargs)
