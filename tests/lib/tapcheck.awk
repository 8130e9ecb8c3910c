# tapcheck.awk - is a TAP stream whole? Every runner passes a suite's output through it
# (tests/run, tests/e2b/run for each part, tap.sh's tap_include; tests/vm/run checks its console
# the same way): the stream is copied unchanged, then one "not ok - NAME: why" line is added
# for each way it is not whole:
#   - no plan ("1..N"): the suite stopped before it printed one (done_testing not reached);
#   - more than one plan: two streams mixed, or a suite that printed its plan twice;
#   - as many results ("ok", "not ok") as the plan says: a plan printed first and results
#     missing (the suite stopped half-way), or results after a plan printed last;
#   - a result numbered out of order ("ok 7" as the 5th result): lost or repeated results;
#   - a plan neither first nor last (results on both sides of it);
#   - a plan of no results (1..0) without "# SKIP" and a reason: a suite that chose nothing;
#   - "Bail out!": the suite gave up.
# Usage: awk -v name=NAME -f tapcheck.awk (without a name: "not ok - why", for a caller that
# names its lines itself). Exit status 0 (the added lines say what is wrong).
{ print }
/^(not )?ok( |$)/ {
	results++
	rest = $0
	sub(/^(not )?ok */, "", rest)
	if (rest ~ /^[0-9]+/) {
		num = rest
		sub(/[^0-9].*$/, "", num)
		if (num + 0 != results && !misnumbered)
			misnumbered = "result " results " is numbered " num
	}
	next
}
/^1\.\.[0-9]+/ {
	plans++
	plan = $0
	sub(/^1\.\./, "", plan)
	sub(/[^0-9].*$/, "", plan)
	if (plan + 0 == 0 && $0 !~ /# *[Ss][Kk][Ii][Pp]/)
		empty = 1
	at = results + 0 # the results before it: 0 (first) or all of them (last)
	next
}
/^Bail out!/ { bailed = bailed ? bailed : $0 }
END {
	if (name != "")
		name = name ": "
	if (plans == 0)
		print "not ok - " name "no plan: it stopped before the end (" results + 0 " results)"
	else if (plans > 1)
		print "not ok - " name plans " plans"
	else if (plan + 0 != results + 0)
		print "not ok - " name "planned " plan " results, gave " results + 0
	else if (at != 0 && at != results)
		print "not ok - " name "the plan came after " at " of its " results " results"
	if (empty)
		print "not ok - " name "a plan of nothing (1..0) without a reason (# SKIP ...)"
	if (misnumbered)
		print "not ok - " name misnumbered
	if (bailed)
		print "not ok - " name bailed
}
