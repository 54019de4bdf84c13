#!/usr/bin/env bash
# Installs the Debian 12 packages logrx builds with. Does nothing when they are
# all present, so CI and repeated runs stay fast. Uses sudo when not root.
set -euo pipefail

# ripgrep: a test checks that 'logrx rules patterns' works with rg -f.
# python3-pytest: the Python package's tests; python3-setuptools, -pip, -wheel: its pip install
# test (all optional: skipped without them).
# libcpp-httplib-dev: `--metrics-listen` (optional at build time, installed so CI
# tests it); prometheus: its tests scrape logrx with a real Prometheus and check
# the output and the alerting rules with promtool. libsystemd-dev: `--journal`
# (optional); systemd-journal-remote: its test writes a journal file.
# zlib1g-dev, libzstd-dev, liblzma-dev, libbz2-dev: compressed logs (each optional
# at build time); gzip, zstd, xz-utils, bzip2: the tests compress logs with them.
packages=(cmake g++ make pkg-config libre2-dev libboost-dev nlohmann-json3-dev
          libspdlog-dev libfmt-dev catch2 libcli11-dev ripgrep python3-pytest
          python3-setuptools python3-pip python3-wheel
          libcpp-httplib-dev prometheus libsystemd-dev systemd-journal-remote
          zlib1g-dev libzstd-dev liblzma-dev libbz2-dev gzip zstd xz-utils bzip2)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
echo "installing: ${missing[*]}" >&2
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
