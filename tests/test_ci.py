"""CI runs what README.md tells a newcomer to run, verbatim, and tests the NumPy floor it declares."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_commands():
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [line for block in blocks for line in block.splitlines() if "glasstorch train" in line or "pytest" in line]


def test_ci_runs_the_readmes_two_commands_verbatim():
    commands = _readme_commands()
    assert len(commands) == 2, commands  # the main job, the tests
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    for command in commands:
        assert command in ci_lines, f"README's command is not a line of .ci/run: {command}"


def test_ci_tests_the_numpy_floor_that_pyproject_declares():
    floor = re.search(r'"numpy>=([0-9.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"LOWEST_NUMPY={floor} " in ci and 'numpy==$LOWEST_NUMPY' in ci


def test_ci_runs_the_op_registry_on_meta_and_on_the_cupy_stand_in():
    """The opt-in device runs (docs/devices.md) broke silently after merges while nothing ran them."""
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "python3 -m pytest -q -p no:cacheprovider tests/test_ops.py::test_op --device meta" in ci_lines
    assert ("python3 -m pytest -q -p no:cacheprovider tests/test_ops.py::test_op tests/test_device_rule.py "
            "--device fakecuda") in ci_lines
