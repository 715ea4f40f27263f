#!/usr/bin/env bash
# What the tests need beyond the build (Debian 12 packages): a real Prometheus for the dashboard
# test, headless Chromium for the report-page test, SLURM (controller, node daemon, client
# commands, munge; the pmix plugin comes with slurm-wlm-basic-plugins) plus openssl for the
# SLURM and TLS tests, clang with its libFuzzer and sanitizer runtimes for scripts/fuzz.sh, and
# dpkg-dev (dpkg-shlibdeps) for the .deb package test; iproute2, iptables and openssh-server for
# the testbed's hosts (network namespaces, shaped links, an sshd on each); clang-format-14 (Debian
# 12's clang-format, the formatter of reference) for scripts/format-check.sh.
set -euo pipefail
packages=(chromium prometheus slurmctld slurmd slurm-client munge openssl clang libclang-rt-14-dev dpkg-dev
  iproute2 iptables openssh-server openssh-client clang-format-14)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-test-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
echo "install-test-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# policy-rc.d: the packages' own services (prometheus, munge, slurmctld, slurmd) must not start;
# the tests start their own.
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
  $sudo chmod +x /usr/sbin/policy-rc.d
  trap '$sudo rm -f /usr/sbin/policy-rc.d' EXIT
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
