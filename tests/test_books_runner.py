"""tools/run_books.py's shortening of the books' code: the epoch counts d2l writes inline in a cell are
capped (ssd's 20-epoch loop, multiple-gpus-concise's `train`), and nothing else in the cell changes."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import run_books  # noqa: E402


def run(code, max_epochs):
    namespace = {"MAX_EPOCHS": max_epochs}
    exec(run_books.runnable(code), namespace)
    return namespace


def test_inline_epoch_counts_are_capped_where_d2l_writes_them():
    ssd = "num_epochs, timer = 20, 'Timer()'\nseen = []\nfor epoch in range(num_epochs):\n    seen.append(epoch)\n"
    assert run(ssd, 2)["seen"] == [0, 1] and run(ssd, 50)["seen"] == list(range(20))
    concise = ("def train(lr):\n    timer, num_epochs = 'Timer()', 10  # inline, in a function\n"
               "    return num_epochs, lr\nresult = train(0.1)\n")
    assert run(concise, 2)["result"] == (2, 0.1)
    assert run("lr, num_epochs, batch_size = 0.1, 10, 256", 3)["num_epochs"] == 3
    assert run("num_epochs = 5", 2)["num_epochs"] == 2


def test_other_code_is_left_as_written():
    for code in ("num_steps, timer = 20, None", "num_epochs = n", "lr = 0.1  # num_epochs = 20",
                 "!pip install d2l", "%%writefile x.py\nnum_epochs = 20"):
        assert run_books.runnable(code) == code
    assert run_books.runnable("%matplotlib inline\nx = 1") == "x = 1"
    assert run_books.runnable("s = 'é'; num_epochs = 7") == "s = 'é'; num_epochs = min(7, MAX_EPOCHS)"
