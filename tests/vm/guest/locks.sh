# tests/vm/guest/locks.sh: byte-range lock checks between two mounts of one
# export ($M and $M2, nosharecache) and against a lock a second client on the
# host holds on request, sourced by nfs3.sh (NLM v4 through the agent's
# portmapper answer) and nfs41.sh (NFSv4.1 LOCK); lock_checks runs them.
# trylock and holdlock use python3's fcntl: lockf is fcntl F_SETLK(W), flock
# is flock(2), which the Linux NFS client sends as a whole-file lock.
#
# Needs: lib.sh's check runner and py; $M, $M2; HOSTLOCK_FILE (a path on a
# guest mount the host's client locks when the guest creates
# /aqvm/hostlock.want: it answers /aqvm/hostlock.held, drops the lock after
# /aqvm/hostlock.done and then creates /aqvm/hostlock.released).

# trylock FILE MODE [START LEN]: a non-blocking exclusive lock; prints
# "locked" or the errno name.
cat >/usr/local/bin/trylock <<'PY'
#!/usr/bin/python3
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
try:
    if sys.argv[2] == "flock":
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, int(sys.argv[4]) if len(sys.argv) > 4 else 0,
                    int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    print("locked")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
PY
# holdlock FILE MODE READY [START LEN]: take the lock (blocking), touch READY, sleep until killed.
cat >/usr/local/bin/holdlock <<'PY'
#!/usr/bin/python3
import fcntl, os, signal, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o666)
if sys.argv[2] == "flock":
    fcntl.flock(fd, fcntl.LOCK_EX)
elif sys.argv[2] == "shared":
    fcntl.lockf(fd, fcntl.LOCK_SH)
else:
    fcntl.lockf(fd, fcntl.LOCK_EX, int(sys.argv[5]) if len(sys.argv) > 5 else 0,
                int(sys.argv[4]) if len(sys.argv) > 4 else 0)
open(sys.argv[3], "w").close()
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
while True:
    signal.pause()
PY
chmod 0755 /usr/local/bin/trylock /usr/local/bin/holdlock

# hold FILE MODE [START LEN]: a holder in the background, up when it has the
# lock; stop_hold ends it (its locks go with its last close).
hold() {
	rm -f /tmp/held
	holdlock "$1" "$2" /tmp/held "${3:-0}" "${4:-0}" </dev/null &
	echo $! >/tmp/hold.pid
	for _ in $(seq 300); do
		[ -e /tmp/held ] && return 0
		kill -0 "$(cat /tmp/hold.pid)" 2>/dev/null || break
		sleep 0.1
	done
	echo "the holder did not get its lock on $1"
	return 1
}
stop_hold() {
	kill "$(cat /tmp/hold.pid)" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$(cat /tmp/hold.pid)" 2>/dev/null || return 0; sleep 0.1; done
	return 0
}
export -f hold stop_hold

t_lock_fcntl() {
	echo data >$M/lk
	hold $M/lk lockf
	eq "a second process through the other mount" EAGAIN "$(trylock $M2/lk lockf)"
	eq "a second process through the same mount" EAGAIN "$(trylock $M/lk lockf)"
	stop_hold
	eq "after the holder went" locked "$(trylock $M2/lk lockf)"
}
t_lock_range() {
	echo data >$M/lkr
	hold $M/lkr lockf 0 100
	eq "an overlapping range" EAGAIN "$(trylock $M2/lkr lockf 50 100)"
	eq "a range after it" locked "$(trylock $M2/lkr lockf 100 100)"
	stop_hold
}
t_lock_shared() {
	echo data >$M/lks
	hold $M/lks shared
	out=$(py 'import fcntl; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB); print("shared")' $M2/lks)
	eq "a second shared lock" shared "$out"
	eq "an exclusive lock" EAGAIN "$(trylock $M2/lks lockf)"
	stop_hold
}
t_lock_flock() {
	echo data >$M/lkf
	hold $M/lkf flock
	eq "flock through the other mount" EWOULDBLOCK "$(trylock $M2/lkf flock | sed 's/EAGAIN/EWOULDBLOCK/')"
	stop_hold
	eq "after the holder went" locked "$(trylock $M2/lkf flock)"
}
# A blocked lock: granted once the holder lets go (through the server's
# GRANTED callback, or, when that cannot reach the guest, the client's own
# re-sent LOCK: Linux polls a blocked NLM lock every 30 s).
t_lock_wait() {
	echo data >$M/lkw
	hold $M/lkw lockf
	t0=$(date +%s)
	(sleep 3; stop_hold) &
	py 'import fcntl; fd = os.open(sys.argv[1], os.O_RDWR); fcntl.lockf(fd, fcntl.LOCK_EX); print("got")' $M2/lkw >/tmp/waited
	wait
	eq "the blocking lock is granted" got "$(cat /tmp/waited)"
	[ $(($(date +%s) - t0)) -ge 3 ] || { echo "granted before the holder let go"; exit 1; }
	echo "# the blocked lock was granted after $(($(date +%s) - t0)) s"
}
t_lock_host() {
	: >/aqvm/hostlock.want
	for _ in $(seq 600); do [ -e /aqvm/hostlock.held ] && break; sleep 0.1; done
	[ -e /aqvm/hostlock.held ] || { echo "the host did not take its lock"; exit 1; }
	got=$(trylock "$HOSTLOCK_FILE" lockf)
	: >/aqvm/hostlock.done
	eq "the guest's lock against the host client's" EAGAIN "$got"
	for _ in $(seq 600); do [ -e /aqvm/hostlock.released ] && break; sleep 0.1; done
	eq "after the host let go" locked "$(trylock "$HOSTLOCK_FILE" lockf)"
}
export -f t_lock_fcntl t_lock_range t_lock_shared t_lock_flock t_lock_wait t_lock_host

lock_checks() {
	check "fcntl lock (lockf): another process is refused through either mount, granted after" t_lock_fcntl
	check "fcntl byte ranges: an overlapping range is refused, the next one granted" t_lock_range
	check "fcntl shared locks: two readers share, a writer is refused" t_lock_shared
	check "flock: excludes through the other mount, granted after" t_lock_flock
	check "a blocking lock waits for the holder and is granted when it lets go" t_lock_wait
	check "a lock held by a second client (NFSv4.1, on the host) refuses the guest's" t_lock_host
}
