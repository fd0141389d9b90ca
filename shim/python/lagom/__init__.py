"""Lagom's runtime shim for PyTorch training scripts.

Call ``lagom.init(config_dir)`` at the top of a training script, before
``torch.distributed.init_process_group``: it exports what ``lagom tune --out config_dir`` chose, so that
NCCL loads Lagom's tuner plugin (libnccl-tuner-lagom.so) with the tuned rules and reads the tuned
per-process variables. ``lagom.process_group_options(group)`` gives the per-communicator CTA limits for
``init_process_group`` / ``new_group``; ``lagom.torch_kwargs()`` the keyword arguments of torch's DDP or
FSDP2 wrapper that ``lagom tune --framework torch-fsdp`` chose. Formats: docs/shim.md.

Only the standard library is used; torch is imported only by ``process_group_options``, and only when
it is installed.
"""

import json
import os
import re
import sys
import warnings

__all__ = [
    "init",
    "DEFAULT_GROUP",
    "SELF_LOCATING_LINE",
    "process_group_options",
    "megatron_communicator_config",
    "torch_kwargs",
    "read_env_file",
    "ENV_FILE",
    "TUNER_CONF_FILE",
    "CONFIG_FILE",
    "PLUGIN_FILE",
]

ENV_FILE = "lagom.env"
TUNER_CONF_FILE = "nccl_tuner.conf"
CONFIG_FILE = "lagom-config.json"
PLUGIN_FILE = "libnccl-tuner-lagom.so"

# The largest CTA (channel) count NCCL 2.28 accepts (MAXCHANNELS).
_MAX_CTAS = 64

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_GROUP = re.compile(r"[A-Za-z0-9_.-]+\Z")
# A bare value: what a POSIX shell assigns unchanged (no quotes, expansions, separators or blanks).
_BARE_VALUE = re.compile(r"[A-Za-z0-9_@%+=:,./~^-]*\Z")


# The one line of lagom.env that is not a plain assignment: bash sets LAGOM_CONFIG_DIR to the folder of
# the file being sourced (BASH_SOURCE), so a copied or moved output folder points at its own files.
SELF_LOCATING_LINE = 'export LAGOM_CONFIG_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"'
# A value relative to that folder: "${LAGOM_CONFIG_DIR}/<bare path>".
_IN_CONFIG_DIR = re.compile(r'"\$\{LAGOM_CONFIG_DIR\}/([A-Za-z0-9_@%+=:,.~^-][A-Za-z0-9_@%+=:,./~^-]*)"\Z')


def _lines(path):
    """The lines of ``path`` as text: UTF-8, a leading byte-order mark dropped; a byte sequence that is not
    UTF-8 is a ValueError naming ``path:line``."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ValueError("%s:%d: not UTF-8 text (byte %d: %s)" % (path, number, error.start + 1, error.reason)) \
                from None


def read_env_file(path):
    """Parses a lagom.env file into a list of (name, value) pairs, in file order.

    Each non-blank line that does not start with '#' is ``export NAME=VALUE`` (``export `` optional).
    VALUE is a bare word of ``A-Z a-z 0-9 _ @ % + = : , . / ~ ^ -`` or a single-quoted string without
    ``'`` inside, so that ``source lagom.env`` in a shell assigns exactly the same value. Two forms make a
    folder relocatable: the line SELF_LOCATING_LINE sets LAGOM_CONFIG_DIR to the file's own folder (as bash
    does when it sources the file), and ``"${LAGOM_CONFIG_DIR}/PATH"`` is PATH in that folder.
    Raises ValueError naming ``path:line`` for any other line or for bytes that are not UTF-8 (a leading
    byte-order mark is ignored), OSError if the file cannot be read.
    """
    pairs = []
    folder = None
    for number, raw in _lines(path):
        line = raw.strip()
        where = "%s:%d" % (path, number)
        if not line or line.startswith("#"):
            continue
        if line == SELF_LOCATING_LINE:
            folder = os.path.dirname(os.path.abspath(path))
            pairs.append(("LAGOM_CONFIG_DIR", folder))
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, equals, value = line.partition("=")
        if not equals:
            raise ValueError("%s: expected 'export NAME=VALUE', got %r" % (where, raw.rstrip("\r")))
        if not _NAME.match(name):
            raise ValueError("%s: invalid variable name %r" % (where, name))
        relative = _IN_CONFIG_DIR.match(value)
        if relative:
            if folder is None:
                raise ValueError("%s: %s uses ${LAGOM_CONFIG_DIR} before the line that sets it" % (where, name))
            value = os.path.join(folder, relative.group(1))
        elif len(value) >= 2 and value[0] == "'" and value[-1] == "'" and "'" not in value[1:-1]:
            value = value[1:-1]
        elif not _BARE_VALUE.match(value):
            raise ValueError(
                "%s: value of %s must be a plain word or a single-quoted string, got %r" % (where, name, value)
            )
        pairs.append((name, value))
    return pairs


def _plugin_candidates():
    """Where an installed or locally built plugin is looked for, in order ("next to the package")."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(package_dir, PLUGIN_FILE),
        os.path.join(package_dir, "lib", PLUGIN_FILE),
        # A source checkout built into build/ (the README's layout): <repo>/shim/python/lagom -> <repo>/build/lib.
        os.path.join(package_dir, "..", "..", "..", "build", "lib", PLUGIN_FILE),
    ]


def _plugin_value(from_env_file):
    """The NCCL_TUNER_PLUGIN value: LAGOM_TUNER_PLUGIN_PATH, else lagom.env's value if it is an existing
    absolute path, else a plugin next to the package, else "lagom" (NCCL then dlopens
    libnccl-tuner-lagom.so through the library search path)."""
    explicit = os.environ.get("LAGOM_TUNER_PLUGIN_PATH", "")
    if explicit:
        if not os.path.isfile(explicit):
            warnings.warn("lagom.init: LAGOM_TUNER_PLUGIN_PATH=%s does not exist" % explicit, RuntimeWarning,
                          stacklevel=3)
        return os.path.abspath(explicit)
    if from_env_file and os.path.isabs(from_env_file) and os.path.isfile(from_env_file):
        return from_env_file
    for candidate in _plugin_candidates():
        if os.path.isfile(candidate):
            return os.path.realpath(candidate)
    return "lagom"


def _distributed_already_initialized():
    """True when torch.distributed is imported and a default process group exists. Never imports torch."""
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return False
    try:
        return bool(dist.is_available() and dist.is_initialized())
    except Exception:  # a partial or unusual torch build: no evidence of an initialised group
        return False


def init(config_dir, override=False):
    """Exports the settings `lagom tune` wrote into ``config_dir``, for NCCL in this process and its children.

    Sets every variable of ``<config_dir>/lagom.env`` (a relative LAGOM_TUNER_CONFIG is taken relative to
    ``config_dir``), NCCL_TUNER_PLUGIN (see _plugin_value) and LAGOM_CONFIG_DIR. A variable already set in
    the environment keeps its value unless ``override`` is true (one warning lists those kept when they
    differ). Call it before torch.distributed.init_process_group: NCCL reads these when it creates a
    communicator, and caches most of them for the life of the process; a RuntimeWarning says so if a
    process group already exists.

    Returns a dict of the variables this call set. Raises FileNotFoundError if config_dir or its lagom.env
    is missing, ValueError for a malformed lagom.env.
    """
    config_dir = os.path.abspath(os.fspath(config_dir))
    if not os.path.isdir(config_dir):
        raise FileNotFoundError("lagom.init: config directory not found: %s" % config_dir)
    env_path = os.path.join(config_dir, ENV_FILE)
    if not os.path.isfile(env_path):
        raise FileNotFoundError(
            "lagom.init: %s not found (write it with `lagom tune --out %s`)" % (env_path, config_dir)
        )
    wanted = dict(read_env_file(env_path))

    conf = wanted.get("LAGOM_TUNER_CONFIG", TUNER_CONF_FILE)
    if not os.path.isabs(conf):
        conf = os.path.join(config_dir, conf)
    wanted["LAGOM_TUNER_CONFIG"] = conf
    if not os.path.isfile(conf):
        warnings.warn("lagom.init: tuner config %s does not exist; NCCL will keep its own choices" % conf,
                      RuntimeWarning, stacklevel=2)
    wanted["NCCL_TUNER_PLUGIN"] = _plugin_value(wanted.get("NCCL_TUNER_PLUGIN"))
    wanted["LAGOM_CONFIG_DIR"] = config_dir

    if _distributed_already_initialized():
        warnings.warn(
            "lagom.init() called after torch.distributed was initialised: existing communicators keep NCCL's "
            "defaults and NCCL has cached its per-process variables; call lagom.init() first",
            RuntimeWarning,
            stacklevel=2,
        )

    applied = {}
    kept = []
    for name, value in wanted.items():
        current = os.environ.get(name)
        if current is not None and not override:
            if current != value:
                kept.append("%s=%s (lagom: %s)" % (name, current, value))
            continue
        os.environ[name] = value
        applied[name] = value
    if kept:
        warnings.warn("lagom.init: kept variables already set in the environment (pass override=True to use "
                      "lagom's): " + ", ".join(kept), RuntimeWarning, stacklevel=2)
    return applied


def _config_dir(config_dir, caller):
    if config_dir is not None:
        return os.path.abspath(os.fspath(config_dir))
    from_env = os.environ.get("LAGOM_CONFIG_DIR", "")
    if not from_env:
        raise RuntimeError("lagom.%s: call lagom.init(config_dir) first or pass config_dir" % caller)
    return from_env


def _read_communicators(config_dir, caller):
    """The validated `communicators` list of lagom-config.json, or None (with a warning) if there is no file."""
    path = os.path.join(config_dir, CONFIG_FILE)
    if not os.path.isfile(path):
        warnings.warn("lagom.%s: %s not found; NCCL keeps its default CTA limits" % (caller, path),
                      RuntimeWarning, stacklevel=3)
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except ValueError as error:
        raise ValueError("%s: not valid JSON: %s" % (path, error)) from None
    communicators = document.get("communicators", []) if isinstance(document, dict) else None
    if not isinstance(communicators, list):
        raise ValueError("%s: 'communicators' must be a list" % path)
    result = {}
    for index, entry in enumerate(communicators):
        where = "%s: communicators[%d]" % (path, index)
        group = entry.get("group") if isinstance(entry, dict) else None
        if not isinstance(group, str) or not _GROUP.match(group):
            raise ValueError("%s: needs a 'group' name of letters, digits, '_', '.' or '-'" % where)
        limits = {}
        for key in ("min_ctas", "max_ctas"):
            value = entry.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_CTAS:
                raise ValueError("%s: %s must be an integer in 1..%d, got %r" % (where, key, _MAX_CTAS, value))
            limits[key] = value
        if limits.get("min_ctas", 1) > limits.get("max_ctas", _MAX_CTAS):
            raise ValueError(
                "%s: min_ctas %d is above max_ctas %d" % (where, limits["min_ctas"], limits["max_ctas"]))
        result.setdefault(group, limits)  # the first entry of a group wins
    return result


# The communicator DDP and FSDP reduce gradients over: their process group defaults to the world group,
# which in a data-parallel job is Lagom's "dp" communicator.
DEFAULT_GROUP = "dp"


def _no_options(why):
    warnings.warn("lagom.process_group_options: " + why + "; pass pg_options=None (NCCL keeps its defaults)",
                  RuntimeWarning, stacklevel=3)
    return None


def process_group_options(group=None, config_dir=None):
    """Per-communicator NCCL settings for ``group`` from lagom-config.json, as torch takes them.

    ``group`` names an entry of ``communicators`` (Megatron's names: "tp", "dp", "pp", "cp", "ep", ...).
    None is the group DDP and FSDP use: the entry "default" when the file has one, else "dp" (a
    data-parallel job's world group). ``config_dir`` defaults to the directory given to lagom.init()
    (LAGOM_CONFIG_DIR).

    Returns a ``torch.distributed.ProcessGroupNCCL.Options`` with ``config.min_ctas`` / ``config.max_ctas``
    set, to pass as ``pg_options`` to ``init_process_group`` / ``new_group`` (torch >= 2.1 with NCCL).
    Returns None, with a RuntimeWarning saying why, when there is nothing torch could take: no
    lagom-config.json, no entry for the group, no torch, a torch without NCCL (Debian's is CPU-only), or a
    torch whose Options cannot carry CTA limits. Never a dict: torch crashes on one passed as pg_options.
    Raises ValueError for a malformed file, RuntimeError when no config directory is known.
    """
    communicators = _read_communicators(_config_dir(config_dir, "process_group_options"), "process_group_options")
    if communicators is None:
        return None
    name = group if group is not None else ("default" if "default" in communicators else DEFAULT_GROUP)
    limits = communicators.get(name)
    if limits is None:
        return _no_options("lagom-config.json has no communicator '%s' (it has: %s)"
                           % (name, ", ".join(sorted(communicators)) or "none"))
    if not limits:
        return _no_options("communicator '%s' has no CTA limits in lagom-config.json" % name)
    try:
        import torch.distributed as dist
    except ImportError:
        return _no_options("torch is not installed")
    nccl_available = getattr(dist, "is_nccl_available", lambda: False)
    process_group_nccl = getattr(dist, "ProcessGroupNCCL", None)
    if process_group_nccl is None or not nccl_available():
        return _no_options("this torch has no NCCL (torch.distributed.is_nccl_available() is False)")
    options = process_group_nccl.Options()
    config = getattr(options, "config", None)
    if config is None:  # torch < 2.1: Options has no config (the ncclConfig_t binding)
        return _no_options("this torch's ProcessGroupNCCL.Options cannot set NCCL CTA limits (torch >= 2.1 can)")
    # ProcessGroupNCCL.Options.config is torch's binding of ncclConfig_t (pytorch/pytorch
    # torch/csrc/distributed/c10d/init.cpp, class NCCLConfig: min_ctas, max_ctas, cga_cluster_size, ...).
    for key, value in limits.items():
        setattr(config, key, value)
    return options


# Lagom's communicator names -> the names Megatron-Core looks up in --nccl-communicator-config-path
# (NVIDIA/Megatron-LM@core_v0.15.0 megatron/core/parallel_state.py: get_nccl_options("dp_cp") :811 for the
# data-parallel group with context parallelism, which carries the gradient buckets and parameter gathers
# (megatron/core/distributed/distributed_data_parallel.py:77-81, 313; the intra-partial group is that group
# with one optimizer instance, parallel_state.py:856-857); "embd" :1061; "ep_tp" :1140, the expert tensor
# group; "ep_dp" :1205, the expert data-parallel group). tp, pp, cp and ep keep their names (:956, :1036,
# :910, :1125). Megatron's plain "dp" group (:888, without CP) carries none of the traffic Lagom prices.
_MEGATRON_GROUP_NAMES = {"dp": "dp_cp", "emb": "embd", "etp": "ep_tp", "edp": "ep_dp"}


def megatron_communicator_config(config_dir=None):
    """The per-communicator CTA limits as the YAML text Megatron-LM's --nccl-communicator-config-path reads
    (one mapping per process-group name with min_ctas / max_ctas, under Megatron-Core's group names: Lagom's
    "dp" is Megatron's "dp_cp", the group its gradient buckets use), or "" when there are none."""
    communicators = _read_communicators(_config_dir(config_dir, "megatron_communicator_config"),
                                        "megatron_communicator_config") or {}
    lines = []
    for group, limits in communicators.items():
        if not limits:
            continue
        lines.append("%s:" % _MEGATRON_GROUP_NAMES.get(group, group))
        lines.extend("  %s: %d" % (key, value) for key, value in limits.items())
    return "\n".join(lines) + ("\n" if lines else "")


_TORCH_WRAPPERS = ("ddp", "fully_shard")


def torch_kwargs(wrapper=None, config_dir=None):
    """Keyword arguments for torch's data-parallel wrapper, as ``lagom tune --framework torch-fsdp`` chose them.

    ``wrapper`` is "ddp" (``torch.nn.parallel.DistributedDataParallel``: ``bucket_cap_mb`` in MiB, as torch
    takes it) or "fully_shard" (FSDP2 ``torch.distributed.fsdp.fully_shard``: ``reshard_after_forward``,
    True for ZeRO-3, False for ZeRO-2); None is the one the tuned strategy uses (lagom-config.json
    ``framework.torch.wrapper``). ``config_dir`` defaults to the directory given to lagom.init().

    Returns a new dict to pass as ``**kwargs``; an empty dict, with a RuntimeWarning saying why, when there is
    no lagom-config.json or it was not tuned for torch (torch then keeps its defaults). Raises ValueError for
    an unknown wrapper or a malformed file, RuntimeError when no config directory is known.
    """
    if wrapper is not None and wrapper not in _TORCH_WRAPPERS:
        raise ValueError("lagom.torch_kwargs: wrapper must be one of %s, got %r" % (", ".join(_TORCH_WRAPPERS), wrapper))
    path = os.path.join(_config_dir(config_dir, "torch_kwargs"), CONFIG_FILE)
    if not os.path.isfile(path):
        warnings.warn("lagom.torch_kwargs: %s not found; torch keeps its defaults" % path, RuntimeWarning,
                      stacklevel=2)
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except ValueError as error:
        raise ValueError("%s: not valid JSON: %s" % (path, error)) from None
    framework = document.get("framework") if isinstance(document, dict) else None
    settings = framework.get("torch") if isinstance(framework, dict) else None
    if settings is None:
        warnings.warn("lagom.torch_kwargs: %s was not tuned for torch (run `lagom tune --framework torch-fsdp`); "
                      "torch keeps its defaults" % path, RuntimeWarning, stacklevel=2)
        return {}
    if not isinstance(settings, dict):
        raise ValueError("%s: framework.torch must be an object" % path)
    chosen = wrapper if wrapper is not None else settings.get("wrapper")
    if chosen not in _TORCH_WRAPPERS:
        raise ValueError("%s: framework.torch.wrapper must be one of %s, got %r" % (path, ", ".join(_TORCH_WRAPPERS), chosen))
    kwargs = settings.get(chosen, {})
    if not isinstance(kwargs, dict) or not all(isinstance(key, str) for key in kwargs):
        raise ValueError("%s: framework.torch.%s must be an object of keyword arguments" % (path, chosen))
    return dict(kwargs)
