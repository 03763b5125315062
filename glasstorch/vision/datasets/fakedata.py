"""torchvision.datasets.FakeData: random images, the same ones for the same index every time -- for
trying a pipeline without data (pytorch/examples' dcgan: ``--dataset fake``)."""
import glasstorch as torch

from ..transforms import transforms
from .vision import VisionDataset


class FakeData(VisionDataset):
    """`size` random images of `image_size` (C, H, W) with labels in ``[0, num_classes)``, as PIL images.

    Image ``index`` is drawn from the global generator seeded with ``index + random_offset`` (the
    generator's state is put back afterwards), so it is the same image on every access. The numbers
    are glasstorch's generator's, not torch's (different pixels than torchvision's FakeData).
    """

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index):
        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = torch.get_rng_state()
        torch.manual_seed(index + self.random_offset)
        img = torch.randn(*self.image_size)
        target = torch.randint(0, self.num_classes, size=(1,), dtype=torch.long)[0]
        torch.set_rng_state(rng_state)
        img = transforms.ToPILImage()(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target.item()

    def __len__(self):
        return self.size
