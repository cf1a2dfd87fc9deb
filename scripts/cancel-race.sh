#!/usr/bin/env bash
# Cancels at every point of a slow booking, on both replicas of the HR server over one
# PostgreSQL (real processes), and checks each time that the task's final status matches the
# database: `cancelled` with nothing booked, or `completed` with the booking made. 100 trials
# on each replica by default (about 90 seconds); `scripts/cancel-race.sh N` runs N. The
# test command runs 10 (examples/tests/servers/mcp_replicas.rs,
# a_cancel_at_any_point_of_a_booking_reports_what_the_database_holds_on_either_replica).
. "$(dirname "$0")/lib/prelude.sh"
HR_CANCEL_TRIALS="${1:-100}" cargo test -q -p examples --all-features --test servers -- \
    --exact mcp_replicas::a_cancel_at_any_point_of_a_booking_reports_what_the_database_holds_on_either_replica \
    --nocapture
