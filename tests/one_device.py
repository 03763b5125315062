"""The tests' switch back to a one-device process: a test of another device earlier in the process switched
the device rule on for good (``devices.many``), and with it ``ANYWHERE.detour``, which turns the one-frame
entries off (``_ops_codegen.entry_lines``). Tensors all on the CPU give the rule nothing to check."""
from glasstorch import _seam
from glasstorch._array import device_rule


def device_rule_off(monkeypatch):
    """Switch the device rule, and its cause of ``ANYWHERE.detour``, off for one test."""
    monkeypatch.setattr(device_rule.state, "many", False)
    monkeypatch.setattr(_seam, "_detour_causes", _seam._detour_causes - {"devices"})
    monkeypatch.setattr(_seam.ANYWHERE, "detour", bool(_seam._detour_causes) or _seam.ANYWHERE.dispatching)
