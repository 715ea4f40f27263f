#!/bin/bash
# Call 0 on a fresh H200 machine: Fashion-MNIST (Debian's dataset-fashion-mnist files, carried as
# .gpu-data, in two calls a and b as the carried files must stay small) put where the package puts it, for the regression study's time-to-accuracy runs.
mkdir -p /usr/share/datasets/fashion-mnist && cp .gpu-data/${1:?a or b}/* /usr/share/datasets/fashion-mnist/ && ls -la /usr/share/datasets/fashion-mnist
