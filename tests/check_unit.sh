#!/usr/bin/env bash
# `systemd-analyze verify` on an instance of the template unit, with ExecStart
# pointing at the logrx under test; any complaint about the unit fails.
#   check_unit.sh LOGRX UNIT_FILE WORKDIR
set -u
logrx=$1 unit=$2 work=$3
command -v systemd-analyze > /dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
sed "s|/usr/local/bin/logrx|$logrx|" "$unit" > "logrx-watch@sglang.service"
printf '[Service]\nExecStart=/bin/sleep 1000\n' > sglang.service
systemd-analyze verify --man=no ./logrx-watch@sglang.service > verify.txt 2>&1
status=$?
cat verify.txt
[ $status -eq 0 ] || { echo "FAIL: systemd-analyze verify exit $status"; exit 1; }
grep -q "logrx-watch@" verify.txt && { echo "FAIL: systemd-analyze complains about the unit"; exit 1; }
echo ok
