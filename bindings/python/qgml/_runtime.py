"""Process-wide state of the package: Kokkos' lifetime, settings as text, points as arrays."""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping
from typing import Any, Dict, Optional, Union

import numpy as np

from . import _qgml

_lock = threading.Lock()
_state = {"ready": False, "started": False}

SettingsLike = Optional[Mapping[str, Any]]
PathLike = Union[str, "os.PathLike[str]"]


def initialize(num_threads: int = 0) -> bool:
    """Starts Kokkos for qgml unless this process already has it running.

    Called on first use by every function of the package, so calling it is needed only to choose the
    number of host threads (``num_threads <= 0``: Kokkos' default, e.g. ``OMP_NUM_THREADS``). When
    the host application (another Kokkos extension, say) has initialised Kokkos, qgml uses it as it is
    and never finalises it. Returns True when this call started Kokkos; then it is finalised at exit.
    """
    with _lock:
        if _state["ready"]:
            return False
        started = _qgml.initialize(int(num_threads))
        _state["ready"] = True
        _state["started"] = started
        if started:
            atexit.register(finalize)
        return started


def finalize() -> None:
    """Ends Kokkos if qgml started it (registered with atexit then; calling it earlier is allowed).

    Every object of the package that holds library state (configurations, runs) is released first;
    using one afterwards raises RuntimeError. A later call of any function does not restart Kokkos
    (Kokkos cannot be initialised twice in one process).
    """
    with _lock:
        if _state["ready"] and _state["started"]:
            _qgml.finalize()
            _state["started"] = False


def ensure() -> None:
    if not _state["ready"]:
        initialize()


def setting_text(value: Any) -> str:
    """A setting's value as the program reads it from the command line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (os.PathLike,)):
        return os.fspath(value)
    return str(value)


def flatten_settings(settings: SettingsLike, prefix: str = "") -> list:
    """[(key, text)] from {"training.epochs": 50} or the YAML-like {"training": {"epochs": 50}}."""
    items = []
    if settings is None:
        return items
    if not isinstance(settings, Mapping):
        raise TypeError(f"qgml: settings must be a mapping of setting names to values, got {type(settings).__name__}")
    for key, value in settings.items():
        if not isinstance(key, str):
            raise TypeError(f"qgml: setting names are strings, got {key!r}")
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            items.extend(flatten_settings(value, name))
        else:
            items.append((name, setting_text(value)))
    return items


def make_settings(config: Optional[PathLike] = None, settings: SettingsLike = None) -> "_qgml.Settings":
    ensure()
    s = _qgml.Settings()
    if config is not None:
        s.load(os.fspath(config))
    for key, value in flatten_settings(settings):
        s.set(key, value)
    return s


def as_points(X: Any, name: str = "X") -> np.ndarray:
    """X as a C-contiguous (T, D) float64 or float32 array: X itself when it is one (no copy)."""
    if isinstance(X, np.ndarray) and X.dtype in (np.float64, np.float32) and X.ndim == 2 and X.flags.c_contiguous:
        return X
    a = np.asarray(X)
    if a.dtype.kind == "c":
        raise TypeError(f"qgml: {name} must be real, got a {a.dtype} array")
    if a.dtype.kind not in "fiub":
        raise TypeError(f"qgml: {name} must be an array of real numbers, got dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"qgml: {name} must have shape (T, D) (one row per point), got shape {a.shape}")
    dtype = a.dtype if a.dtype in (np.float64, np.float32) else np.float64
    return np.ascontiguousarray(a, dtype=dtype)


def parameter_settings(estimator: Any, parameters: Dict[str, str]) -> dict:
    """An estimator's settings: its ``settings`` mapping, then each parameter (attribute name -> setting
    name) that is not None; None keeps the program's default."""
    s = dict(flatten_settings(estimator.settings))
    for name, key in parameters.items():
        value = getattr(estimator, name)
        if value is not None:
            s[key] = value
    return s
