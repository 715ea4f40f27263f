#!/usr/bin/env bash
# Installs what scalebench builds and runs with, from Debian 12's packages (CUDA, NCCL and
# cuDNN are optional and come from NVIDIA's toolkit under /usr/local/cuda when present).
# libjs-chart.js: the report page inlines its Chart.js for interactive charts.
# dataset-fashion-mnist and fortunes: the real data of `train` (time to accuracy) and `gpt` (text).
# libnetfilter-queue-dev, iptables, iproute2: the testbed's delay line (NFQUEUE) and its namespaces.
# python3-numpy: scripts/reference-gradients.py, train's gradients recomputed in float64.
set -euo pipefail
packages=(build-essential cmake ninja-build git curl python3 pkg-config
  libopenmpi-dev openmpi-bin libboost-dev libboost-math-dev libyaml-cpp-dev prometheus-cpp-dev
  libsqlite3-dev nlohmann-json3-dev libcli11-dev libgtest-dev libssl-dev
  librsvg2-dev fonts-dejavu-core libjs-chart.js zlib1g-dev dataset-fashion-mnist fortunes
  libnetfilter-queue-dev iptables iproute2 python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
