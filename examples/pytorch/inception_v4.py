"""Inception-v4 (Szegedy, Ioffe, Vanhoucke, Alemi 2016, "Inception-v4, Inception-ResNet and the
Impact of Residual Connections on Learning") in PyTorch, as timm's `inception_v4` and Cadene's
pretrainedmodels `inceptionv4` define it: the same modules, names and parameters (42,679,816 with
1000 classes), so their weights load into it. torchvision has no Inception-v4; this is the peer
of scalebench's `train` model `inception4` (workloads/train/inception.cpp builds the same layers
under the same names).

- BasicConv2d: convolution without bias, batch norm (eps 0.001), ReLU.
- The stem: three convolutions, then Mixed_3a/4a/5a (max pool beside a strided convolution,
  1x7 and 7x1 factorised convolutions), 299x299 -> 35x35x384.
- 4 x Inception-A (35x35x384), Reduction-A (17x17x1024), 7 x Inception-B, Reduction-B
  (8x8x1536), 3 x Inception-C; global average pooling, one linear layer (dropout left out, as
  timm's default drop_rate=0).
- The branch pools are 3x3, stride 1, padding 1, with count_include_pad=False (the padding is
  not in the divisor), as in both reference definitions.

    from inception_v4 import inception_v4
    model = inception_v4()          # 1000 classes, 299x299 input
"""
import torch
import torch.nn as nn


class BasicConv2d(nn.Module):
    def __init__(self, in_planes, out_planes, kernel_size, stride=1, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(in_planes, out_planes, kernel_size=kernel_size, stride=stride, padding=padding,
                              bias=False)
        self.bn = nn.BatchNorm2d(out_planes, eps=0.001)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


def branch_pool():
    return nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)


class Mixed3a(nn.Module):
    def __init__(self):
        super().__init__()
        self.maxpool = nn.MaxPool2d(3, stride=2)
        self.conv = BasicConv2d(64, 96, kernel_size=3, stride=2)

    def forward(self, x):
        return torch.cat((self.maxpool(x), self.conv(x)), 1)


class Mixed4a(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = nn.Sequential(BasicConv2d(160, 64, 1), BasicConv2d(64, 96, 3))
        self.branch1 = nn.Sequential(
            BasicConv2d(160, 64, 1),
            BasicConv2d(64, 64, (1, 7), padding=(0, 3)),
            BasicConv2d(64, 64, (7, 1), padding=(3, 0)),
            BasicConv2d(64, 96, 3),
        )

    def forward(self, x):
        return torch.cat((self.branch0(x), self.branch1(x)), 1)


class Mixed5a(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = BasicConv2d(192, 192, kernel_size=3, stride=2)
        self.maxpool = nn.MaxPool2d(3, stride=2)

    def forward(self, x):
        return torch.cat((self.conv(x), self.maxpool(x)), 1)


class InceptionA(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = BasicConv2d(384, 96, 1)
        self.branch1 = nn.Sequential(BasicConv2d(384, 64, 1), BasicConv2d(64, 96, 3, padding=1))
        self.branch2 = nn.Sequential(
            BasicConv2d(384, 64, 1), BasicConv2d(64, 96, 3, padding=1), BasicConv2d(96, 96, 3, padding=1))
        self.branch3 = nn.Sequential(branch_pool(), BasicConv2d(384, 96, 1))

    def forward(self, x):
        return torch.cat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)), 1)


class ReductionA(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = BasicConv2d(384, 384, 3, stride=2)
        self.branch1 = nn.Sequential(
            BasicConv2d(384, 192, 1), BasicConv2d(192, 224, 3, padding=1), BasicConv2d(224, 256, 3, stride=2))
        self.branch2 = nn.MaxPool2d(3, stride=2)

    def forward(self, x):
        return torch.cat((self.branch0(x), self.branch1(x), self.branch2(x)), 1)


class InceptionB(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = BasicConv2d(1024, 384, 1)
        self.branch1 = nn.Sequential(
            BasicConv2d(1024, 192, 1),
            BasicConv2d(192, 224, (1, 7), padding=(0, 3)),
            BasicConv2d(224, 256, (7, 1), padding=(3, 0)),
        )
        self.branch2 = nn.Sequential(
            BasicConv2d(1024, 192, 1),
            BasicConv2d(192, 192, (7, 1), padding=(3, 0)),
            BasicConv2d(192, 224, (1, 7), padding=(0, 3)),
            BasicConv2d(224, 224, (7, 1), padding=(3, 0)),
            BasicConv2d(224, 256, (1, 7), padding=(0, 3)),
        )
        self.branch3 = nn.Sequential(branch_pool(), BasicConv2d(1024, 128, 1))

    def forward(self, x):
        return torch.cat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)), 1)


class ReductionB(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = nn.Sequential(BasicConv2d(1024, 192, 1), BasicConv2d(192, 192, 3, stride=2))
        self.branch1 = nn.Sequential(
            BasicConv2d(1024, 256, 1),
            BasicConv2d(256, 256, (1, 7), padding=(0, 3)),
            BasicConv2d(256, 320, (7, 1), padding=(3, 0)),
            BasicConv2d(320, 320, 3, stride=2),
        )
        self.branch2 = nn.MaxPool2d(3, stride=2)

    def forward(self, x):
        return torch.cat((self.branch0(x), self.branch1(x), self.branch2(x)), 1)


class InceptionC(nn.Module):
    def __init__(self):
        super().__init__()
        self.branch0 = BasicConv2d(1536, 256, 1)
        self.branch1_0 = BasicConv2d(1536, 384, 1)
        self.branch1_1a = BasicConv2d(384, 256, (1, 3), padding=(0, 1))
        self.branch1_1b = BasicConv2d(384, 256, (3, 1), padding=(1, 0))
        self.branch2_0 = BasicConv2d(1536, 384, 1)
        self.branch2_1 = BasicConv2d(384, 448, (3, 1), padding=(1, 0))
        self.branch2_2 = BasicConv2d(448, 512, (1, 3), padding=(0, 1))
        self.branch2_3a = BasicConv2d(512, 256, (1, 3), padding=(0, 1))
        self.branch2_3b = BasicConv2d(512, 256, (3, 1), padding=(1, 0))
        self.branch3 = nn.Sequential(branch_pool(), BasicConv2d(1536, 256, 1))

    def forward(self, x):
        x1 = self.branch1_0(x)
        x2 = self.branch2_2(self.branch2_1(self.branch2_0(x)))
        return torch.cat((self.branch0(x), self.branch1_1a(x1), self.branch1_1b(x1), self.branch2_3a(x2),
                          self.branch2_3b(x2), self.branch3(x)), 1)


class InceptionV4(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            BasicConv2d(3, 32, 3, stride=2),
            BasicConv2d(32, 32, 3),
            BasicConv2d(32, 64, 3, padding=1),
            Mixed3a(),
            Mixed4a(),
            Mixed5a(),
            *[InceptionA() for _ in range(4)],
            ReductionA(),
            *[InceptionB() for _ in range(7)],
            ReductionB(),
            *[InceptionC() for _ in range(3)],
        )
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.last_linear = nn.Linear(1536, num_classes)

    def forward(self, x):
        return self.last_linear(torch.flatten(self.global_pool(self.features(x)), 1))


def inception_v4(num_classes=1000):
    return InceptionV4(num_classes=num_classes)


if __name__ == "__main__":
    m = inception_v4()
    print("parameters:", sum(p.numel() for p in m.parameters()))  # 42679816
    print("output:", tuple(m(torch.randn(2, 3, 299, 299)).shape))  # (2, 1000)
