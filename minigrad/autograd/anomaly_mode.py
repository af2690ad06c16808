"""Anomaly detection: remember where each node's forward ran and check backward for NaN."""
from __future__ import annotations

import warnings


class _AnomalyState:
    __slots__ = ("enabled",)

    def __init__(self) -> None:
        self.enabled = False


_Anomaly = _AnomalyState()


def is_anomaly_enabled() -> bool:
    return _Anomaly.enabled


def _set(flag: bool) -> None:
    if flag and not _Anomaly.enabled:
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
            "enabled for debugging.",
            UserWarning,
            stacklevel=3,
        )
    _Anomaly.enabled = bool(flag)


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` turns anomaly mode on now; also usable as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _Anomaly.enabled
        _set(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _Anomaly.enabled = self.prev
        return False


class detect_anomaly:
    """Context manager: record forward tracebacks and raise when a backward returns NaN."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _Anomaly.enabled

    def __enter__(self):
        _set(True)
        return self

    def __exit__(self, *exc):
        _Anomaly.enabled = self.prev
        return False
