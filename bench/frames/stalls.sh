#!/bin/sh
# bench/frames/stalls.sh FPS TRACE...: for each per-frame trace of
# bench/frames/frames -t (STREAM FRAME ASK_MS LAT_MS STATUS), how many dropped
# frames (late or skip) fall in a machine-wide stall, another stream also
# dropping a frame whose deadline (ask + 1/FPS) lies within 100 ms of this
# one's, and how many in a stall of their stream alone.
#   label dropped D both B one O
fps=$1
shift
for t in "$@"; do
	awk -v fps="$fps" -v label="$(basename "$t" .trace)" '
	  $5 != "ok" { n++; s[n] = $1; d[n] = $3 + 1000 / fps }
	  END {
	    both = 0
	    for (i = 1; i <= n; i++) {
	      hit = 0
	      for (j = 1; j <= n && !hit; j++)
	        if (s[j] != s[i] && d[j] - d[i] <= 100 && d[i] - d[j] <= 100)
	          hit = 1
	      both += hit
	    }
	    printf "%s dropped %d both %d one %d\n", label, n, both, n - both
	  }' "$t"
done
