"""The README's main job: python -m glasstorch train / linreg, run as a user runs it (subprocesses)."""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest


def glasstorch_cli(*args, cwd, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "glasstorch", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def run(*args, cwd, env=None):
    out = glasstorch_cli(*args, cwd=cwd, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def run_in_terminal(*args, cwd, env=None, timeout=300):
    """Run the CLI with a pseudo-terminal as its stdout and stderr; (exit status, everything it wrote)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))   # 24 rows, 100 columns
    proc = subprocess.Popen([sys.executable, "-m", "glasstorch", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower)
    os.close(follower)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if ready:
            try:
                data = os.read(leader, 65536)
            except OSError:      # EIO: the process closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(leader)
    proc.wait(timeout=30)
    return proc.returncode, b"".join(chunks).decode()


def env_without_tqdm(tmp_path):
    """An environment where `import tqdm` fails, as on a machine without it."""
    hide = tmp_path / "no_tqdm" / "tqdm"
    hide.mkdir(parents=True)
    (hide / "__init__.py").write_text("raise ImportError('tqdm is hidden for this test')\n")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(hide.parent), os.environ.get("PYTHONPATH", "")]))


def test_train_reports_accuracy_saves_a_model_torch_can_load_and_draws_the_graph(tmp_path):
    out = run("train", "--epochs", "3", "--out", str(tmp_path), cwd=tmp_path)
    accs = [float(a) for a in re.findall(r"held-out accuracy ([0-9.]+)", out)]
    assert len(accs) == 4 and accs[-1] == accs[-2] > 0.6          # it learns (chance is 0.1); then the summary
    assert "seatbelt: no traps found in" in out        # the ordinary loop trips no trap
    assert "NllLossBackward0" in out and "ConvolutionBackward0" in out
    assert (tmp_path / "digits_lenet_graph.svg").read_text().lstrip().startswith(("<?xml", "<svg", "<!--"))
    # not a terminal: one line per epoch, no per-batch carriage returns; the last line says what and where
    assert "\r" not in out and len(re.findall(r"^epoch \d+: train loss", out, re.M)) == 3
    last = out.rstrip().splitlines()[-1]
    assert re.fullmatch(r"done: held-out accuracy 0\.\d{3} after 3 epochs in [0-9.]+ s; model in (.+); graph in (.+)",
                        last.replace(", graph", "; graph")), last
    assert str(tmp_path / "digits_lenet.pt") in last and str(tmp_path / "digits_lenet_graph.svg") in last
    torch = pytest.importorskip("torch")
    state = torch.load(tmp_path / "digits_lenet.pt")   # weights_only=True: real PyTorch reads our file
    assert list(state)[:2] == ["0.weight", "0.bias"] and tuple(state["0.weight"].shape) == (6, 1, 3, 3)


def test_linreg_learns_the_true_parameters(tmp_path):
    out = run("linreg", cwd=tmp_path)
    w = [float(x) for x in re.search(r"learned w = \[([^\]]+)\]", out).group(1).split(",")]
    b = float(re.search(r"learned b = ([-0-9.]+)", out).group(1))
    assert abs(w[0] - 2.0) < 0.01 and abs(w[1] + 3.4) < 0.01 and abs(b - 4.2) < 0.01
    assert "AccumulateGrad  <- w (2,)" in out


# -- every argument checked before training ----------------------------------------------------------
# `python -m glasstorch` pays for `import glasstorch` (seconds on a loaded machine), so the argument checks
# run in this process through main(argv), which is what the command calls; one case runs as a subprocess.

def cli_in_process(capsys, *argv):
    """main(argv) as `python -m glasstorch` runs it: (exit status, stdout, stderr)."""
    from glasstorch.__main__ import main
    try:
        main(list(argv))
        status = 0
    except SystemExit as e:
        status = e.code
    out = capsys.readouterr()
    return status, out.out, out.err


BAD_ARGUMENTS = [
    (["--epochs", "0"], "argument --epochs: must be at least 1, got 0"),
    (["--epochs", "-3"], "argument --epochs: must be at least 1, got -3"),
    (["--epochs", "2.5"], "argument --epochs: '2.5' is not an integer"),
    (["--batch-size", "0"], "argument --batch-size: must be at least 1, got 0"),
    (["--lr", "-1"], "argument --lr: must be a finite number greater than 0, got -1"),
    (["--lr", "nan"], "argument --lr: must be a finite number greater than 0, got nan"),
    (["--lr", "inf"], "argument --lr: must be a finite number greater than 0, got inf"),
    (["--lr", "0"], "argument --lr: must be a finite number greater than 0, got 0"),
    (["--lr", "fast"], "argument --lr: 'fast' is not a number"),
    (["--seed", str(2 ** 64)], "argument --seed: must be in [-2**63, 2**64)"),
    (["--out", "/proc/glasstorch_out"], "argument --out: cannot create files in '/proc'"),
    (["--out", "a_file/models"], "a_file' is not a directory"),
]


@pytest.mark.parametrize("args, message", BAD_ARGUMENTS, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_bad_arguments_are_refused_by_argparse_before_any_training(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("not a folder")
    status, out, err = cli_in_process(capsys, "train", *args)
    assert status == 2 and err.startswith("usage: python -m glasstorch train") and message in err, err
    assert "training on" not in out and not (tmp_path / "glasstorch_out").exists()


def test_flags_without_a_job_are_trains_and_errors_exit_2_without_a_traceback(tmp_path):
    out = glasstorch_cli("--lr", "nan", cwd=tmp_path)
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stdout == "", out.stderr
    assert "python -m glasstorch train: error: argument --lr: must be a finite number" in out.stderr


@pytest.mark.parametrize("word, hint", [
    ("trian", "unknown job 'trian' (did you mean 'train'?): choose from train, linreg, run"),
    ("3", "unknown job '3': choose from train, linreg, run"),
    ("prog.py", "'prog.py' is not a job; to run a program: python -m glasstorch run prog.py"),
])
def test_a_word_that_is_no_job_gets_a_helpful_error(capsys, word, hint):
    status, _, err = cli_in_process(capsys, word)
    assert status == 2 and hint in err and "invalid choice" not in err, err


def test_version_and_help_with_defaults(capsys):
    import glasstorch
    status, out, _ = cli_in_process(capsys, "--version")
    assert status == 0
    assert out.strip() == f"glasstorch {glasstorch.version.glasstorch} (torch API level {glasstorch.version.torch_api})"
    status, top, _ = cli_in_process(capsys, "--help")
    assert status == 0 and "{train,linreg,run}" in top and "--version" in top and "flags given alone are" in top
    status, helps, _ = cli_in_process(capsys, "train", "--help")
    helps = " ".join(helps.split())
    for default in ("(default: 12)", "(default: 32)", "(default: 0.005)", "(default: 0)", "(default: glasstorch_out)"):
        assert default in helps, helps


def test_run_still_runs_programs(tmp_path):
    (tmp_path / "prog.py").write_text("import sys, torch\nprint(torch.__name__, torch.ones(2).sum().item(), "
                                      "sys.argv[1:])\n")
    assert run("run", "prog.py", "--epochs", "0", cwd=tmp_path).split() == ["glasstorch", "2.0", "['--epochs',",
                                                                             "'0']"]


# -- the saved model ----------------------------------------------------------------------------------

def test_a_saved_model_is_replaced_only_by_one_at_least_as_accurate(tmp_path, capsys):
    import glasstorch
    from glasstorch.__main__ import evaluate, lenet, save_model
    from glasstorch.datasets import Digits
    from glasstorch.utils.data import DataLoader
    glasstorch.manual_seed(0)
    held_out = DataLoader(Digits(train=False), batch_size=256)
    model = lenet()
    accuracy = evaluate(model, held_out)
    saved, beside = tmp_path / "digits_lenet.pt", tmp_path / "digits_lenet.new.pt"
    assert save_model(model, accuracy, held_out, str(tmp_path)) == str(saved)             # nothing there yet
    assert save_model(model, accuracy, held_out, str(tmp_path)) == str(saved)             # as good: replaced
    first = saved.read_bytes()
    assert save_model(lenet(), accuracy - 0.01, held_out, str(tmp_path)) == str(beside)   # worse: kept
    assert saved.read_bytes() == first and beside.exists()
    assert f"it scores {accuracy:.3f} held-out accuracy, this run {accuracy - 0.01:.3f}" in capsys.readouterr().out
    saved.write_bytes(b"someone's file")
    assert save_model(model, 1.0, held_out, str(tmp_path)) == str(beside)                 # not this network's
    assert saved.read_bytes() == b"someone's file"
    assert "is not a state_dict of this network (" in capsys.readouterr().out


def test_an_interrupted_run_saves_nothing(tmp_path):
    # (SIGINT restored in the child: a test run started in the background, `pytest ... &` or under nohup,
    # passes SIGINT on ignored, and Python then never raises KeyboardInterrupt -- nor would torch's)
    proc = subprocess.Popen([sys.executable, "-m", "glasstorch", "train", "--epochs", "1000", "--out", "o"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in proc.stdout:          # one flushed line per epoch, even into a pipe
            if line.startswith("epoch 1:"):
                break
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted: nothing was saved" in err and "Traceback" not in err, err
    assert not (tmp_path / "o" / "digits_lenet.pt").exists()


# -- the progress bar on a terminal -------------------------------------------------------------------

def test_on_a_terminal_tqdm_counts_every_batch(tmp_path):
    pytest.importorskip("tqdm")
    status, out = run_in_terminal("train", "--epochs", "1", "--out", "o", cwd=tmp_path)
    assert status == 0, out
    counts = [int(n) for n in re.findall(r"(\d+)/47 \[", out)]
    assert counts and max(counts) == 47 and "100%" in out, out     # not stuck at 0%
    assert "batch/s" in out or "s/batch" in out


def test_on_a_terminal_without_tqdm_a_plain_bar_is_drawn_in_place(tmp_path):
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "digits_lenet.pt").write_bytes(b"someone's file")
    status, out = run_in_terminal("train", "--epochs", "1", "--out", "o", cwd=tmp_path,
                                  env=env_without_tqdm(tmp_path))
    assert status == 0, out
    assert "\repoch 1/1 [" + "#" * 30 + "] 47/47 loss " in out and out.count("/47 loss") == 47
    assert "epoch 1: train loss" in out
    # the file found in --out stays; this run's model is written next to it, and the summary says where
    assert (tmp_path / "o" / "digits_lenet.pt").read_bytes() == b"someone's file"
    assert "kept the model saved earlier in o/digits_lenet.pt: it is not a state_dict of this network" in out
    assert "model in o/digits_lenet.new.pt, graph in o/digits_lenet_graph.svg" in out
