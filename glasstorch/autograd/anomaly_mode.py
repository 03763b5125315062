"""detect_anomaly / set_detect_anomaly: remember each node's forward stack, check backward for NaN."""


class _AnomalyState:
    # (slots, set in __init__: every recorded node reads ``enabled``, and a class attribute read through
    # an instance is an unspecialised lookup on CPython 3.11, a slot read a specialised one)
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


_anomaly = _AnomalyState()


def is_anomaly_enabled():
    return _anomaly.enabled


def is_anomaly_check_nan_enabled():
    return _anomaly.check_nan


class set_detect_anomaly:
    """Usable as a function (``set_detect_anomaly(True)``) or a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _anomaly.enabled, _anomaly.check_nan = bool(mode), check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        import warnings
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only "
                      "be enabled for debugging.", stacklevel=2)
        self.prev = (_anomaly.enabled, _anomaly.check_nan)
        _anomaly.enabled, _anomaly.check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with detect_anomaly(self.check_nan):
                return fn(*a, **k)
        return wrapper
