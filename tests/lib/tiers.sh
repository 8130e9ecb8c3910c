# tiers.sh - the tiers .ci/run asks of tests/run through the environment (the sanitizer build,
# the VM, fuzzing, compat, the mutation sample, the install checks, runtime-tools, the time
# budget), in one list: a tests/run
# started for something else (the mutation check's suites, test-tap.sh's fake build) runs without
# them, and a new tier cannot be forgotten in one of its callers. test-tap.sh checks the list against .ci/run.
# shellcheck shell=bash
CORDON_TIERS=(CORDON_SANITIZE_BUILD CORDON_VM CORDON_FUZZ_SECONDS CORDON_COMPAT CORDON_MUTATE
	CORDON_INSTALL CORDON_RUNTIME_TOOLS CORDON_TEST_BUDGET CORDON_SANITIZE_MODES)

# without_tiers CMD...: CMD with none of the tiers in its environment
without_tiers() {
	local unset=() v
	for v in "${CORDON_TIERS[@]}"; do unset+=(-u "$v"); done
	env "${unset[@]}" "$@"
}
