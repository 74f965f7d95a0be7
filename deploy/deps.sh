#!/usr/bin/env bash
# deploy/deps.sh: install what Aquifer needs on Debian 12 (as root).
#   deploy/deps.sh build   libraries and tools to build and run
#   deploy/deps.sh test    build + what the test suites drive (curl, jq, libnfs, clang, ...)
# Installs only what is missing, so a second run is quick.
set -euo pipefail
BUILD="build-essential autoconf automake pkg-config libmicrohttpd-dev libjansson-dev
  libsqlite3-dev libcurl4-openssl-dev libjwt-dev libssl-dev libgnutls28-dev check curl jq sqlite3 openssl libnfs-utils smbclient"
TEST="libnfs-dev libnfs-utils clang wrk python3 iproute2 nodejs systemd debhelper fakeroot debootstrap man-db prometheus chromium"
want="$BUILD"
[ "${1:-build}" = test ] && want="$BUILD $TEST"
missing=()
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: Debian's package, unless a node distribution already brings its own npm.
if [ "${1:-build}" = test ] && ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The kernel-client test guest (issue 25, tests/vm): QEMU, the Debian kernel and modules it
# boots, mmdebstrap for its root, cpio for its initramfs. Installed by `test` only.
if [ "${1:-build}" = test ]; then
  vm_missing=()
  for p in qemu-system-x86 linux-image-amd64 mmdebstrap cpio; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || vm_missing+=("$p")
  done
  if [ ${#vm_missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${vm_missing[@]}" >/dev/null
  fi
fi

# The SMB protocol modules' unit suites (issue 18): Nettle is the independent
# implementation the signing tests compare against (libgnutls28-dev pulls it in;
# named here so the suites do not depend on that).
if [ "${1:-build}" = test ]; then
  dpkg-query -W -f='${Status}' nettle-dev 2>/dev/null | grep -q "install ok installed" || {
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends nettle-dev >/dev/null
  }
fi

# Snapshots (issue 20): the snapshot suites make a btrfs shelf from a loop image
# (mkfs.btrfs), where btrfs snapshots are O(1); without it they run on the
# portable fallback. Installed by `test` only.
if [ "${1:-build}" = test ]; then
  dpkg-query -W -f='${Status}' btrfs-progs 2>/dev/null | grep -q "install ok installed" || {
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends btrfs-progs >/dev/null
  }
fi
# The agent's SMB server e2e suite (issue 18) drives Debian's smbclient.
if [ "${1:-build}" = test ]; then
  command -v smbclient >/dev/null 2>&1 || {
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends smbclient >/dev/null
  }
fi
# bench/frames and tests/e2e/test_read_ahead.sh play frames over SMB with libsmbclient (issue 23).
if [ "${1:-build}" = test ]; then
  dpkg-query -W -f='${Status}' libsmbclient-dev 2>/dev/null | grep -q "install ok installed" || {
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends libsmbclient-dev >/dev/null
  }
fi
# SMB oplock breaks waited for by NFS (issue 18): test_smb_nfs_break's SMB client is impacket's.
if [ "${1:-build}" = test ]; then
  [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import impacket' >/dev/null 2>&1 || {
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends python3 python3-impacket >/dev/null
  }
fi
# SMB locks and share modes (issue 18): test_smb_torture runs smbtorture
# (samba-testsuite) against the agent and against a stock smbd (samba);
# test_smb_torture_ntfs gives smbd vfs_acl_xattr (samba-vfs-modules).
if [ "${1:-build}" = test ]; then
  { command -v smbtorture >/dev/null 2>&1 && { command -v smbd >/dev/null 2>&1 || [ -x /usr/sbin/smbd ]; } &&
    dpkg-query -W -f='${Status}' samba-vfs-modules 2>/dev/null | grep -q "install ok installed"; } || {
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends samba samba-testsuite samba-vfs-modules >/dev/null
  }
fi

# The PostgreSQL engine of db/ (issue 22): libpq to build (configure requires it), and
# for `test` the server binaries (initdb, pg_ctl) that tests/lib/pg.sh starts per test.
pg_want="libpq-dev"
[ "${1:-build}" = test ] && pg_want="libpq-dev postgresql-15"
pg_missing=()
for p in $pg_want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || pg_missing+=("$p")
done
if [ ${#pg_missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${pg_missing[@]}" >/dev/null
fi
# bench/nfs (issue 25) compares the agent with NFS-Ganesha (its VFS FSAL, rpcbind in a private
# network namespace) and profiles it with perf. A manual bench: installed by `bench` only.
if [ "${1:-build}" = bench ]; then
  bench_missing=()
  for p in nfs-ganesha nfs-ganesha-vfs rpcbind linux-perf libnfs-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || bench_missing+=("$p")
  done
  if [ ${#bench_missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${bench_missing[@]}" >/dev/null
  fi
fi
