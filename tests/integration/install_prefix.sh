#!/usr/bin/env bash
# `cmake --install` to a temporary prefix: the programs run from there (the CLI finds its siblings
# next to itself), the units name that prefix's bin/, and the deploy files, examples and docs are
# where docs/install.md says. With SCALEBENCH_CPACK=1 also `cpack -G DEB`: a .deb whose contents
# are those files and whose dependencies come from dpkg-shlibdeps.
source "$(dirname "$0")/lib.sh"
BUILD=${SCALEBENCH_BUILD:?set SCALEBENCH_BUILD to the build folder}
P=$WORK/prefix
cmake --install "$BUILD" --prefix "$P" >"$WORK/install.log" 2>&1 || fail "cmake --install: $(tail -n 5 "$WORK/install.log")"

for p in scalebench scalebench-coordinator scalebench-agent scalebench-run; do
  [[ -x $P/bin/$p ]] || fail "$P/bin/$p not installed"
done
out=$("$P/bin/scalebench" --version) || fail "$P/bin/scalebench --version failed"
grep -q "^scalebench [0-9][0-9.]*" <<<"$out" || fail "scalebench --version printed: $out"
"$P/bin/scalebench-coordinator" --version | grep -q "^scalebench-coordinator " || fail "coordinator --version"
"$P/bin/scalebench-agent" --version | grep -q "^scalebench-agent " || fail "agent --version"
for u in scalebench-coordinator scalebench-agent; do
  unit=$P/lib/systemd/system/$u.service
  [[ -s $unit ]] || fail "$unit not installed"
  grep -q "^ExecStart=$P/bin/$u " "$unit" || fail "$unit: ExecStart does not name $P/bin: $(grep ExecStart "$unit")"
done
D=$P/share/scalebench
for f in deploy/prometheus/prometheus.yml deploy/prometheus/rules.yml deploy/prometheus/alerts.yml \
  deploy/grafana/dashboards/scalebench-collectives.json deploy/grafana/provisioning/datasources/prometheus.yaml \
  deploy/slurm/scalebench.sbatch deploy/README.md examples/quick.yaml; do
  [[ -s $D/$f ]] || fail "$D/$f not installed"
done
[[ -x $D/deploy/slurm/scalebench.sbatch ]] || fail "the sbatch script is not executable"
[[ -s $P/share/doc/scalebench/metrics.md && -s $P/share/doc/scalebench/README.md ]] || fail "docs not installed"

if [[ ${SCALEBENCH_CPACK:-0} == 1 ]]; then
  (cd "$WORK" && cpack --config "$BUILD/CPackConfig.cmake" -G DEB) >"$WORK/cpack.log" 2>&1 ||
    fail "cpack: $(tail -n 20 "$WORK/cpack.log")"
  deb=$(ls "$WORK"/scalebench_*.deb)
  dpkg-deb -c "$deb" >"$WORK/deb-contents.txt" || fail "dpkg-deb -c $deb"
  for f in usr/bin/scalebench usr/bin/scalebench-agent usr/bin/scalebench-run usr/lib/systemd/system/scalebench-agent.service \
    usr/share/scalebench/deploy/prometheus/alerts.yml usr/share/scalebench/deploy/slurm/scalebench.sbatch; do
    grep -q " \./$f$" "$WORK/deb-contents.txt" || fail "$deb has no /$f"
  done
  dpkg-deb -x "$deb" "$WORK/deb"
  grep -q "^ExecStart=/usr/bin/scalebench-agent " "$WORK/deb/usr/lib/systemd/system/scalebench-agent.service" ||
    fail "the packaged agent unit does not start /usr/bin/scalebench-agent"
  deps=$(dpkg-deb -f "$deb" Depends)
  for d in openmpi-bin libc6 libsqlite3; do grep -q "$d" <<<"$deps" || fail "$deb: Depends lacks $d: $deps"; done
  echo "install_prefix: $(basename "$deb"): Depends: $deps"
fi
echo "install_prefix: ok"
