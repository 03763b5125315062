"""Small stand-in data sets, in the very file formats the books download, for running the books offline.

`tools/run_books.py` calls :func:`make_all` once per work directory. Each maker writes what the book's
loader reads -- FashionMNIST/MNIST as the IDX files torchvision's dataset classes open, CIFAR-10 as its
pickled batches, d2l's text and table files as d2l's readers parse them, Step-by-Step's Rock Paper
Scissors as an ImageFolder tree -- but tiny (tens to hundreds of samples), so that every training loop in
the books ends in seconds. The numbers are seeded random data with enough structure to be learnable
(class-dependent image patterns, a linear target); nothing in a run is meant to reach the books' accuracy.

Which book file needs which stand-in:

=====================================  ==========================================================
d2l (`../data` of each chapter)        made here
=====================================  ==========================================================
FashionMNIST, MNIST (torchvision)      ``FashionMNIST/raw/*-ubyte``, ``MNIST/raw/*-ubyte``
CIFAR-10 (torchvision)                 ``cifar-10-batches-py/`` (its MD5 sums: :data:`CIFAR_MD5`)
``timemachine.txt``                    generated English-like text, lower case letters and spaces
``fra-eng.zip``                        ``fra-eng/fra.txt``: tab-separated English/French pairs
``kaggle_house_pred_{train,test}.csv`` a house-price table with numeric, categorical and missing cells
``airfoil_self_noise.dat``             tab-separated, 5 features and a target
``banana-detection.zip``               ``bananas_{train,val}/label.csv`` + 256x256 PNG images
``ptb.zip``                            ``ptb/ptb.train.txt`` (word2vec's corpus)
``pokemon.zip``                        ``pokemon/<class>/<n>.png``: 96x96 RGB sprites (DCGAN)
``wikitext-2-v1.zip``                  ``wikitext-2/wiki.train.tokens``: paragraphs of " . "-separated
                                       sentences (BERT's data set)
``glove.6B.{50,100}d.zip``             ``glove.6B.<d>d/vec.txt``: "word v1 ... vd" lines
``kaggle_cifar10_tiny.zip``            ``trainLabels.csv``, ``train/<id>.png``, ``test/<id>.png`` (32x32)
``kaggle_dog_tiny.zip``                ``labels.csv``, ``train/<id>.jpg``, ``test/<id>.jpg``
``hotdog.zip``                         ``hotdog/{train,test}/{hotdog,not-hotdog}/<n>.png``
``VOCtrainval_11-May-2012.tar``        ``VOCdevkit/VOC2012/``: segmentation lists, JPEGs, colour labels
``aclImdb_v1.tar.gz``                  ``aclImdb/{train,test}/{pos,neg}/<n>_<stars>.txt`` reviews
``snli_1.0.zip``                       ``snli_1.0/snli_1.0_{train,test}.txt``, SNLI's columns
=====================================  ==========================================================

Step-by-Step's ``rps/`` and ``rps-test-set/`` (Chapters 6 and 7) are ImageFolder trees of 300x300 PNGs.
"""
import gzip
import hashlib
import io
import os
import pickle
import zipfile

import numpy as np

N_IMAGES_TRAIN = 64   # one minibatch at the books' batch sizes: a training epoch is one step
N_IMAGES_TEST = 32

WORDS = ("the time traveller said that he had seen a machine which could move in every direction of "
         "space and time it was a strange thing to see we sat and looked at the little model for a long "
         "while then the psychologist asked what it was made of and the medical man laughed").split()


def _idx(array):
    """An IDX file's bytes (the MNIST format): magic (0, 0, 0x08 = uint8, ndim), the big-endian sizes, data."""
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(int(n).to_bytes(4, "big") for n in array.shape)
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def class_images(rng, n, shape, n_classes=10):
    """`n` uint8 images of `shape` whose pixels depend on their label (a bright band at a label-dependent
    place plus noise), and the labels: learnable in a few steps, not trivially."""
    labels = rng.integers(0, n_classes, n)
    images = rng.integers(0, 60, (n,) + shape).astype(np.int64)
    height = shape[-2] if len(shape) >= 2 else shape[0]
    band = max(1, height // n_classes)
    for i, label in enumerate(labels):
        rows = slice(label * band, label * band + band)
        if len(shape) == 2:
            images[i, rows, :] += 180
        else:
            images[i, :, rows, :] += 180
    return np.clip(images, 0, 255).astype(np.uint8), labels.astype(np.uint8)


def make_mnist_like(root, name, seed):
    """``root/<name>/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``, as torchvision's MNIST reads."""
    raw = os.path.join(root, name, "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(seed)
    for prefix, n in (("train", N_IMAGES_TRAIN), ("t10k", N_IMAGES_TEST)):
        images, labels = class_images(rng, n, (28, 28))
        for kind, array in (("images-idx3", images), ("labels-idx1", labels)):
            data = _idx(array)
            with open(os.path.join(raw, f"{prefix}-{kind}-ubyte"), "wb") as f:
                f.write(data)
            with gzip.open(os.path.join(raw, f"{prefix}-{kind}-ubyte.gz"), "wb") as f:
                f.write(data)


CIFAR_LABELS = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
# filled by make_cifar10: {file name: md5}; the runner points the dataset classes' checksums at these
CIFAR_MD5 = {}


def make_cifar10(root, seed=3):
    """``root/cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta}``: pickled dicts as
    torchvision's CIFAR10 unpickles them (``data`` uint8 (N, 3072), ``labels``)."""
    folder = os.path.join(root, "cifar-10-batches-py")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(seed)
    files = {f"data_batch_{i}": N_IMAGES_TRAIN // 4 for i in range(1, 6)}
    files["test_batch"] = N_IMAGES_TEST
    for name, n in files.items():
        images, labels = class_images(rng, n, (3, 32, 32))
        payload = {"batch_label": name, "labels": [int(v) for v in labels], "data": images.reshape(n, -1),
                   "filenames": [f"{name}_{i}.png" for i in range(n)]}
        _write(os.path.join(folder, name), pickle.dumps(payload, protocol=2))
    _write(os.path.join(folder, "batches.meta"),
           pickle.dumps({"label_names": CIFAR_LABELS, "num_cases_per_batch": 10000, "num_vis": 3072}, 2))
    for name in list(files) + ["batches.meta"]:
        with open(os.path.join(folder, name), "rb") as f:
            CIFAR_MD5[name] = hashlib.md5(f.read()).hexdigest()


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def english_like(rng, n_words):
    """Words from :data:`WORDS` in random runs, split into lines: lower case letters and spaces."""
    words = rng.choice(WORDS, n_words)
    lines = [" ".join(words[i:i + 12]) for i in range(0, n_words, 12)]
    return "\n".join(lines) + "\n"


def make_timemachine(root, seed=4):
    """``timemachine.txt``: about 30,000 characters (d2l's TimeMachine takes 10,000 + 5,000 windows)."""
    text = "The Time Machine, by H. G. Wells [1898]\n\n\nI\n\n\n" + english_like(np.random.default_rng(seed), 6000)
    _write(os.path.join(root, "timemachine.txt"), text.encode())


ENG_FRA = {"go": "va", "i": "je", "am": "suis", "he": "il", "is": "est", "we": "nous", "are": "sommes",
           "home": "chez moi", "calm": "calme", "lost": "perdu", "run": "cours", "stop": "arrête",
           "wait": "attends", "here": "ici", "good": "bon", "cold": "froid", "fine": "bien", "tired": "fatigué",
           "now": "maintenant", "see": "vois", "you": "toi", "it": "le", "hi": "salut", "help": "aide"}


def make_fra_eng(root, seed=5, n_pairs=1200):
    """``fra-eng.zip`` holding ``fra-eng/fra.txt``: "English<TAB>French" lines, as the Tatoeba file."""
    rng = np.random.default_rng(seed)
    english = list(ENG_FRA)
    lines = []
    for _ in range(n_pairs):
        words = list(rng.choice(english, rng.integers(1, 5)))
        punct = str(rng.choice([".", "!", "?"]))
        eng = " ".join(words).capitalize() + punct
        fra = " ".join(ENG_FRA[w] for w in words).capitalize() + "\u202f" * (punct != ".") + punct
        lines.append(f"{eng}\t{fra}")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("fra-eng/fra.txt", "\n".join(lines) + "\n")
    _write(os.path.join(root, "fra-eng.zip"), buffer.getvalue())


def make_kaggle_house(root, seed=6):
    """``kaggle_house_pred_train.csv`` (with SalePrice) and ``kaggle_house_pred_test.csv``: Kaggle's
    columns in kind -- integers, floats with missing cells, strings -- at 120 + 60 rows."""
    rng = np.random.default_rng(seed)
    zoning, street, condition = ["RL", "RM", "FV", "RH"], ["Pave", "Grvl"], ["Normal", "Abnorml", "Partial"]
    header = "Id,MSSubClass,MSZoning,LotFrontage,LotArea,Street,OverallQual,YearBuilt,SaleCondition"

    def rows(first_id, n, with_price):
        out = []
        for i in range(n):
            quality = int(rng.integers(1, 11))
            area = int(rng.integers(2000, 20000))
            frontage = "" if rng.random() < 0.15 else f"{rng.uniform(20, 120):.1f}"
            price = int(30000 + 18000 * quality + 4 * area + rng.normal(0, 8000))
            cells = [first_id + i, int(rng.choice([20, 60, 120])), rng.choice(zoning), frontage, area,
                     rng.choice(street), quality, int(rng.integers(1900, 2010)), rng.choice(condition)]
            out.append(",".join(str(c) for c in cells) + (f",{price}" if with_price else ""))
        return out

    _write(os.path.join(root, "kaggle_house_pred_train.csv"),
           ("\n".join([header + ",SalePrice"] + rows(1, 120, True)) + "\n").encode())
    _write(os.path.join(root, "kaggle_house_pred_test.csv"),
           ("\n".join([header] + rows(121, 60, False)) + "\n").encode())


def make_airfoil(root, seed=7, n=300):
    """``airfoil_self_noise.dat``: 5 features and a noisy linear target, tab-separated, no header."""
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, 5)) * [1000, 5, 0.05, 30, 0.01] + [2000, 6, 0.1, 50, 0.01]
    target = features @ [0.001, -0.3, 20, 0.05, -100] + 120 + rng.normal(0, 1, n)
    table = np.column_stack([features, target])
    _write(os.path.join(root, "airfoil_self_noise.dat"),
           "".join("\t".join(f"{v:.6g}" for v in row) + "\n" for row in table).encode())


def make_banana_detection(root, seed=8):
    """``banana-detection.zip``: ``banana-detection/bananas_{train,val}/label.csv`` (img_name, label,
    xmin, ymin, xmax, ymax) and ``images/<n>.png``, 256x256 RGB with one yellow box each."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for split, n in (("bananas_train", 32), ("bananas_val", 16)):
            lines = ["img_name,label,xmin,ymin,xmax,ymax"]
            for i in range(n):
                image = rng.integers(0, 120, (256, 256, 3)).astype(np.uint8)
                x0, y0 = (int(v) for v in rng.integers(0, 200, 2))
                x1, y1 = x0 + int(rng.integers(20, 56)), y0 + int(rng.integers(20, 56))
                image[y0:y1, x0:x1] = (230, 210, 40)
                png = io.BytesIO()
                Image.fromarray(image).save(png, format="PNG")
                z.writestr(f"banana-detection/{split}/images/{i}.png", png.getvalue())
                lines.append(f"{i}.png,0,{x0},{y0},{x1},{y1}")
            z.writestr(f"banana-detection/{split}/label.csv", "\n".join(lines) + "\n")
    _write(os.path.join(root, "banana-detection.zip"), buffer.getvalue())


def make_ptb(root, seed=9):
    """``ptb.zip`` holding ``ptb/ptb.train.txt``: space-separated words, one sentence a line."""
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("ptb/ptb.train.txt", english_like(rng, 8000))
    _write(os.path.join(root, "ptb.zip"), buffer.getvalue())


def make_pokemon(root, seed=14, n_classes=2, per_class=16):
    """``pokemon.zip``: ``pokemon/<class>/<n>.png``, an ImageFolder tree of 96x96 RGB sprites (a
    coloured blob on white, as the originals), one DCGAN minibatch in all."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for label in range(n_classes):
            for i in range(per_class):
                image = np.full((96, 96, 3), 255, np.uint8)
                y0, x0 = (int(v) for v in rng.integers(8, 48, 2))
                image[y0:y0 + 40, x0:x0 + 40] = rng.integers(0, 256, 3)
                png = io.BytesIO()
                Image.fromarray(image).save(png, format="PNG")
                z.writestr(f"pokemon/{label:03d}/{i}.png", png.getvalue())
    _write(os.path.join(root, "pokemon.zip"), buffer.getvalue())


def make_wikitext2(root, seed=15, n_paragraphs=120):
    """``wikitext-2-v1.zip`` holding ``wikitext-2/wiki.train.tokens`` as WikiText-2 lays it out: a
    `` = Title = `` heading, then paragraphs of sentences separated by `` . ``, one paragraph a line
    (d2l's ``_read_wiki`` keeps the lines with at least two sentences)."""
    rng = np.random.default_rng(seed)
    lines = [" = Stand-in = ", ""]
    for _ in range(n_paragraphs):
        sentences = [" ".join(rng.choice(WORDS, int(rng.integers(4, 12)))) for _ in range(int(rng.integers(2, 6)))]
        lines.append(" " + " . ".join(sentences) + " . ")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("wikitext-2/wiki.train.tokens", "\n".join(lines) + "\n")
    _write(os.path.join(root, "wikitext-2-v1.zip"), buffer.getvalue())


# the words d2l's similarity and analogy cells look up, beside the corpus' own
GLOVE_WORDS = ("chip", "baby", "beautiful", "man", "woman", "son", "daughter", "beijing", "china", "tokyo",
               "japan", "bad", "worst", "big", "biggest", "do", "did", "go", "went", "great", "awful",
               "good", "movie", "film", "this", "is", "so")


def make_glove(root, seed=16):
    """``glove.6B.50d.zip`` and ``glove.6B.100d.zip``: ``glove.6B.<d>d/vec.txt``, one "word v1 ... vd"
    line per word (the format d2l's ``TokenEmbedding`` reads), random vectors."""
    rng = np.random.default_rng(seed)
    words = list(dict.fromkeys(GLOVE_WORDS + tuple(WORDS)))
    for dim in (50, 100):
        text = "".join(w + " " + " ".join(f"{v:.5f}" for v in rng.normal(0, 0.5, dim)) + "\n" for w in words)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr(f"glove.6B.{dim}d/vec.txt", text)
        _write(os.path.join(root, f"glove.6B.{dim}d.zip"), buffer.getvalue())


def _png(image, format="PNG"):
    """An image array's file bytes (PNG, or JPEG for the data sets that ship JPEGs)."""
    from PIL import Image
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format=format)
    return buffer.getvalue()


def _labelled_image(rng, label, size, n_classes):
    """An RGB uint8 image of `size` (height, width) whose bright band's place depends on `label`."""
    height, width = size
    image = rng.integers(0, 90, (height, width, 3)).astype(np.uint8)
    band = max(1, height // n_classes)
    image[label * band:label * band + band] = 200
    return image


CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def make_kaggle_cifar10_tiny(root, seed=17, per_class=40, n_test=5):
    """``kaggle_cifar10_tiny.zip``: ``kaggle_cifar10_tiny/trainLabels.csv`` ("id,label", ids from 1),
    ``train/<id>.png`` and ``test/<id>.png``, 32x32 RGB, as the Kaggle competition's files.

    40 per class: the section keeps 10% of each class for validation and loads batches of 32 with
    ``drop_last=True``, so it needs at least 4 per class for one validation batch, and its training
    loop plots every ``num_batches // 5`` batches (5 batches of the 360 training images at least)."""
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        lines, image_id = ["id,label"], 1
        for label, name in enumerate(CIFAR10_CLASSES):
            for _ in range(per_class):
                z.writestr(f"kaggle_cifar10_tiny/train/{image_id}.png",
                           _png(_labelled_image(rng, label, (32, 32), len(CIFAR10_CLASSES))))
                lines.append(f"{image_id},{name}")
                image_id += 1
        z.writestr("kaggle_cifar10_tiny/trainLabels.csv", "\n".join(lines) + "\n")
        for i in range(1, n_test + 1):
            z.writestr(f"kaggle_cifar10_tiny/test/{i}.png",
                       _png(_labelled_image(rng, int(rng.integers(10)), (32, 32), 10)))
    _write(os.path.join(root, "kaggle_cifar10_tiny.zip"), buffer.getvalue())


def make_kaggle_dog_tiny(root, seed=18, breeds=("beagle", "boxer", "pug", "collie"), per_breed=80, n_test=3):
    """``kaggle_dog_tiny.zip``: ``kaggle_dog_tiny/labels.csv`` ("id,breed"), ``train/<id>.jpg`` and
    ``test/<id>.jpg`` (hexadecimal ids, 64x80 JPEGs), as the dog-breed competition's files.

    4 breeds of 80: the section keeps ``floor(0.1 * 80) = 8`` per breed for validation, and both its
    training and validation loaders use batches of 32 with ``drop_last=True``; its ``train`` plots
    every ``num_batches // 5`` batches and divides by the number of validation examples. So it needs
    one validation batch (32) and five training batches (here 9 of the 288 left)."""
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        lines = ["id,breed"]
        for label, breed in enumerate(breeds):
            for _ in range(per_breed):
                image_id = "%032x" % int(rng.integers(2 ** 62))
                z.writestr(f"kaggle_dog_tiny/train/{image_id}.jpg",
                           _png(_labelled_image(rng, label, (64, 80), len(breeds)), "JPEG"))
                lines.append(f"{image_id},{breed}")
        z.writestr("kaggle_dog_tiny/labels.csv", "\n".join(lines) + "\n")
        for _ in range(n_test):
            image_id = "%032x" % int(rng.integers(2 ** 62))
            z.writestr(f"kaggle_dog_tiny/test/{image_id}.jpg",
                       _png(_labelled_image(rng, 0, (64, 80), len(breeds)), "JPEG"))
    _write(os.path.join(root, "kaggle_dog_tiny.zip"), buffer.getvalue())


def make_hotdog(root, seed=19, per_class=(320, 4)):
    """``hotdog.zip``: ``hotdog/{train,test}/{hotdog,not-hotdog}/<n>.png``, an ImageFolder tree of
    RGB images of a few sizes (the originals vary in size; the book resizes and crops them).
    640 training images: ``train_ch13`` plots every ``num_batches // 5`` batches of 128, so it needs
    five batches; small images (the book crops and resizes them to 224x224 anyway)."""
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for split, n in zip(("train", "test"), per_class):
            for label, name in enumerate(("hotdog", "not-hotdog")):
                for i in range(n):
                    size = (int(rng.integers(40, 64)), int(rng.integers(40, 64)))
                    z.writestr(f"hotdog/{split}/{name}/{i}.png", _png(_labelled_image(rng, label, size, 2)))
    _write(os.path.join(root, "hotdog.zip"), buffer.getvalue())


# d2l's VOC_COLORMAP, the first six classes: background, aeroplane, bicycle, bird, boat, bottle
VOC_COLORS = ((0, 0, 0), (128, 0, 0), (0, 128, 0), (128, 128, 0), (0, 0, 128), (128, 0, 128))


def make_voc2012(root, seed=20, n_train=160, n_val=32, size=(330, 490)):
    """``VOCtrainval_11-May-2012.tar``: ``VOCdevkit/VOC2012/ImageSets/Segmentation/{train,val}.txt``,
    ``JPEGImages/<name>.jpg`` and ``SegmentationClass/<name>.png`` (labels as VOC colours, RGB),
    images a little larger than the book's 320x480 crops. fcn trains with ``train_ch13`` on batches of
    32 with ``drop_last=True`` (``load_data_voc``): it plots every ``num_batches // 5`` batches, so it
    needs five training batches (160 images), and one test batch (32) for its accuracy."""
    import tarfile
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    base = "VOCdevkit/VOC2012/"
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        def add(name, data):
            info = tarfile.TarInfo(base + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for split, n in (("train", n_train), ("val", n_val)):
            names = [f"2007_{split}_{i:04d}" for i in range(n)]
            add(f"ImageSets/Segmentation/{split}.txt", ("\n".join(names) + "\n").encode())
            for name in names:
                label = np.zeros(size + (3,), np.uint8)
                image = rng.integers(0, 100, size + (3,)).astype(np.uint8)
                for _ in range(2):   # two rectangles of random classes on the background
                    y0, x0 = int(rng.integers(0, size[0] - 80)), int(rng.integers(0, size[1] - 80))
                    color = VOC_COLORS[int(rng.integers(1, len(VOC_COLORS)))]
                    label[y0:y0 + 80, x0:x0 + 80] = color
                    image[y0:y0 + 80, x0:x0 + 80] += np.array(color, np.uint8) // 2
                add(f"JPEGImages/{name}.jpg", _png(image, "JPEG"))
                add(f"SegmentationClass/{name}.png", _png(label))
    _write(os.path.join(root, "VOCtrainval_11-May-2012.tar"), buffer.getvalue())


SENTIMENT_WORDS = {1: ("good", "great", "beautiful", "fine"), 0: ("bad", "awful", "worst", "cold")}


def make_aclimdb(root, seed=21, n_train=160, n_test=20):
    """``aclImdb_v1.tar.gz``: ``aclImdb/{train,test}/{pos,neg}/<n>_<stars>.txt``, one review a file,
    English-like text with words that carry the sentiment; `n_train` reviews per label: five
    minibatches of 64 (d2l's ``train_ch13`` plots every ``num_batches // 5`` batches and divides by
    zero with fewer)."""
    import tarfile
    rng = np.random.default_rng(seed)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for split, n in (("train", n_train), ("test", n_test)):
            for label, folder in ((1, "pos"), (0, "neg")):
                for i in range(n):
                    words = list(rng.choice(WORDS + ["movie", "film", "this", "is", "so"], int(rng.integers(20, 80))))
                    for position in rng.integers(0, len(words), 6):
                        words[position] = str(rng.choice(SENTIMENT_WORDS[label]))
                    data = (" ".join(words).capitalize() + ".").encode()
                    info = tarfile.TarInfo(f"aclImdb/{split}/{folder}/{i}_{7 + 3 * label}.txt")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    _write(os.path.join(root, "aclImdb_v1.tar.gz"), buffer.getvalue())


SNLI_LABELS = ("entailment", "contradiction", "neutral")


def _binary_parse(words):
    """A sentence as SNLI's binary parse column writes it: nested parentheses around the words."""
    text = words[-1]
    for word in reversed(words[:-1]):
        text = f"( {word} {text} )"
    return text


def make_snli(root, seed=22, n_train=1400, n_test=100):
    """``snli_1.0.zip``: ``snli_1.0/snli_1.0_{train,test}.txt``, SNLI's tab-separated columns (gold
    label, the two sentences' binary parses, ...) with a header line and a few "-" (no gold) rows;
    five minibatches of 256 (the decomposable-attention section's) for training (``train_ch13``, see
    :func:`make_aclimdb`)."""
    rng = np.random.default_rng(seed)
    header = "gold_label\tsentence1_binary_parse\tsentence2_binary_parse\tsentence1\tsentence2"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for split, n in (("train", n_train), ("test", n_test)):
            lines = [header]
            for i in range(n):
                premise = list(rng.choice(WORDS, int(rng.integers(4, 12)))) + ["."]
                hypothesis = list(rng.choice(WORDS, int(rng.integers(3, 8)))) + ["."]
                label = "-" if i % 50 == 49 else SNLI_LABELS[int(rng.integers(3))]
                lines.append("\t".join([label, _binary_parse(premise), _binary_parse(hypothesis),
                                        " ".join(premise), " ".join(hypothesis)]))
            z.writestr(f"snli_1.0/snli_1.0_{split}.txt", "\n".join(lines) + "\n")
    _write(os.path.join(root, "snli_1.0.zip"), buffer.getvalue())


def make_rps(root, seed=10):
    """Step-by-Step's Rock Paper Scissors: ``rps/{paper,rock,scissors}/*.png`` and ``rps-test-set/...``
    (300x300 RGBA PNGs, as the originals), a few per class."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    for split, n in (("rps", 6), ("rps-test-set", 3)):
        for label, name in enumerate(("paper", "rock", "scissors")):
            folder = os.path.join(root, split, name)
            os.makedirs(folder, exist_ok=True)
            for i in range(n):
                image = np.full((300, 300, 4), 255, np.uint8)
                image[..., :3] = rng.integers(0, 80, (300, 300, 3))
                image[60 + 60 * label:120 + 60 * label, 40:260, :3] = 220
                Image.fromarray(image, "RGBA").save(os.path.join(folder, f"{name}{i:02d}.png"))


# ImageNet weights the d2l sections load with ``pretrained=True``: (torchvision builder, hub file name)
PRETRAINED_STANDINS = (("resnet18", "resnet18-f37072fd.pth"), ("resnet34", "resnet34-b627a593.pth"),
                       ("vgg19", "vgg19-dcbb9e9d.pth"))


def make_pretrained_standins(torch_home, seed=21):
    """Stand-ins for torchvision's ImageNet checkpoints in ``<torch_home>/hub/checkpoints``, where
    torch.hub (and glasstorch.hub) look before downloading; a cached file's hash is not checked.

    Random weights in the checkpoints' keys, shapes and dtypes (He-normal convolutions and linears,
    batch-norm scales and variances near 1), saved by glasstorch in torch's format: both frameworks
    load the same numbers, so the fine-tuning sections compare. ResNet-18 (fine-tuning, fcn),
    ResNet-34 (kaggle-dog) and VGG-19 (neural-style: 548 MB as the original, its classifier's
    linears included, which the section loads and never uses; made once per work directory)."""
    import glasstorch
    from glasstorch.vision import models
    folder = os.path.join(torch_home, "hub", "checkpoints")
    os.makedirs(folder, exist_ok=True)
    for builder, file in PRETRAINED_STANDINS:
        path = os.path.join(folder, file)
        if os.path.exists(path):
            continue
        rng = np.random.default_rng(seed)
        state = {}
        for key, value in getattr(models, builder)(weights=None).state_dict().items():
            shape = tuple(value.shape)
            if key.endswith("num_batches_tracked"):
                array = np.zeros(shape, dtype=np.int64)
            elif key.endswith("running_var") or (len(shape) == 1 and key.endswith("weight")):
                array = rng.uniform(0.5, 1.5, shape).astype(np.float32)
            elif key.endswith(("running_mean", "bias")):
                array = rng.normal(0.0, 0.05, shape).astype(np.float32)
            else:
                array = rng.normal(0.0, np.sqrt(2.0 / np.prod(shape[1:])), shape).astype(np.float32)
            state[key] = glasstorch.from_numpy(array)
        glasstorch.save(state, path + ".tmp")
        os.replace(path + ".tmp", path)


def make_d2l(root):
    """Every d2l stand-in into `root` (the directory the chapters call ``../data``)."""
    os.makedirs(root, exist_ok=True)
    make_mnist_like(root, "FashionMNIST", seed=1)
    make_mnist_like(root, "MNIST", seed=2)
    make_cifar10(root)
    make_timemachine(root)
    make_fra_eng(root)
    make_kaggle_house(root)
    make_airfoil(root)
    make_ptb(root)
    make_wikitext2(root)
    make_glove(root)
    make_aclimdb(root)
    make_snli(root)
    try:
        make_banana_detection(root)
        make_pokemon(root)
        make_kaggle_cifar10_tiny(root)
        make_kaggle_dog_tiny(root)
        make_hotdog(root)
        make_voc2012(root)
    except ImportError:   # Pillow absent: the object-detection sections then fail under both frameworks
        pass


# ----------------------------------------------------------------------------------------------------
# The public programs' stand-ins (tools/run_programs.py)
# ----------------------------------------------------------------------------------------------------

def make_mnist_for_programs(root, n_train=640, n_test=128, seed=11):
    """``root/MNIST/raw/...`` with more images than the books' (the examples log per minibatch of 64)."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.default_rng(seed)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images, labels = class_images(rng, n, (28, 28))
        for kind, array in (("images-idx3", images), ("labels-idx1", labels)):
            _write(os.path.join(raw, f"{prefix}-{kind}-ubyte"), _idx(array))


def make_wikitext(folder, seed=12):
    """``folder/{train,valid,test}.txt`` in WikiText-2's layout (space-separated tokens, `` = Title = ``
    headings, ``<unk>``), about 20,000 / 4,000 / 4,000 words."""
    rng = np.random.default_rng(seed)
    os.makedirs(folder, exist_ok=True)
    for name, n in (("train", 20000), ("valid", 4000), ("test", 4000)):
        body = english_like(rng, n).replace(" said ", " <unk> ")
        _write(os.path.join(folder, f"{name}.txt"), (" \n = Stand-in = \n \n" + body).encode())


def make_char_text(path, n_words=12000, seed=13):
    """A plain text file for character-level models (nanoGPT's and minGPT's ``input.txt``); it opens
    with the words minGPT's chargpt samples from (``"O God, O God!"``: every character must occur)."""
    text = english_like(np.random.default_rng(seed), n_words)
    _write(path, ("O God, O God! " + text.replace("the time", "The Time")).encode())
