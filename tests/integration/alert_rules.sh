#!/usr/bin/env bash
# deploy/prometheus's rule files load, and the alerts fire (and stay quiet) as alerts_test.yml
# says: promtool's own rule unit tests, on the recording rules and the alerts together.
set -euo pipefail
PROMTOOL=${PROMTOOL:-/usr/bin/promtool}
if [[ ! -x $PROMTOOL ]]; then
  echo "SKIP: $PROMTOOL not found (Debian/Ubuntu package 'prometheus'; CI installs it)"
  exit 77
fi
cd "${SCALEBENCH_SRC:?}/deploy/prometheus"
"$PROMTOOL" check rules rules.yml alerts.yml
"$PROMTOOL" test rules alerts_test.yml
