#!/usr/bin/env bash
# Run a JMeter plan non-GUI with Debian's JMeter 2.13 through JMeterLauncher.
#
#   jmeter/run.sh <plan.jmx> <results.jtl> [-Jkey=value ...]
#
# - installs jmeter + jmeter-http with apt when /usr/share/jmeter is missing
#   (needs root, as on the project's machines);
# - compiles jmeter/JMeterLauncher.java into
#   ${CITYHUB_CACHE:-$HOME/.cache/cityhub}/jmeter-launcher (outside the repo)
#   when it is not compiled yet or the source is newer;
# - runs `-n -t plan -l results.jtl -j results.log` plus the -J arguments and
#   writes the results as a CSV .jtl with a header line (the `success` column
#   includes the assertions; failureMessage says which one failed);
# - exits non-zero when JMeter could not run the plan or wrote no sample.
#   Failed samples do not make it fail: read the .jtl with summarize.py.
#
# Environment: JMETER_HOME (default /usr/share/jmeter), CITYHUB_CACHE,
# JMETER_TIMEOUT (seconds, default 1800; 0 = none), JVM_ARGS (default
# "-Xms256m -Xmx1g"), JMETER_LOG (log file, default <results>.log).
set -euo pipefail

usage() {
    echo "usage: $0 <plan.jmx> <results.jtl> [-Jkey=value ...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
plan=$1
results=$2
shift 2
case "$plan" in -*) usage ;; esac
case "$results" in -*) usage ;; esac
[ -f "$plan" ] || { echo "run.sh: no such plan: $plan" >&2; exit 2; }

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jmeter_home=${JMETER_HOME:-/usr/share/jmeter}
cache=${CITYHUB_CACHE:-$HOME/.cache/cityhub}/jmeter-launcher
src=$here/JMeterLauncher.java
timeout_s=${JMETER_TIMEOUT:-1800}
log=${JMETER_LOG:-${results%.jtl}.log}

# (a) JMeter itself
if [ ! -f "$jmeter_home/bin/ApacheJMeter.jar" ]; then
    if [ "$jmeter_home" != /usr/share/jmeter ]; then
        echo "run.sh: $jmeter_home/bin/ApacheJMeter.jar not found" >&2
        exit 1
    fi
    echo "run.sh: installing jmeter and jmeter-http with apt" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq jmeter jmeter-http >&2
fi
command -v javac >/dev/null 2>&1 || {
    echo "run.sh: javac not found (install a JDK, e.g. openjdk-17-jdk-headless)" >&2
    exit 1
}

classpath="$jmeter_home/bin/ApacheJMeter.jar:$jmeter_home/lib/*:$jmeter_home/lib/ext/*"

# (b) the launcher, compiled outside the repository
if [ ! -f "$cache/JMeterLauncher.class" ] || [ "$src" -nt "$cache/JMeterLauncher.class" ]; then
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/build.XXXXXX")
    javac -nowarn -d "$tmp" -cp "$classpath:/usr/share/java/*" "$src"
    mv -f "$tmp"/*.class "$cache"/
    rmdir "$tmp"
fi

# (c) the run
mkdir -p "$(dirname "$results")" "$(dirname "$log")"
rm -f "$results"   # JMeter appends to an existing .jtl
save=(
    -Jjmeter.save.saveservice.output_format=csv
    -Jjmeter.save.saveservice.print_field_names=true
    -Jjmeter.save.saveservice.default_delimiter=,
    -Jsample_variables=user_id,order_id
    -Jjmeter.save.saveservice.timestamp_format=ms
    -Jjmeter.save.saveservice.time=true
    -Jjmeter.save.saveservice.label=true
    -Jjmeter.save.saveservice.response_code=true
    -Jjmeter.save.saveservice.response_message=true
    -Jjmeter.save.saveservice.successful=true
    -Jjmeter.save.saveservice.thread_name=true
    -Jjmeter.save.saveservice.data_type=true
    -Jjmeter.save.saveservice.assertion_results_failure_message=true
    -Jjmeter.save.saveservice.bytes=true
    -Jjmeter.save.saveservice.thread_counts=true
    -Jjmeter.save.saveservice.latency=true
    -Jjmeter.save.saveservice.url=true
    -Jjmeter.save.saveservice.autoflush=false
    -Jsampleresult.timestamp.start=true
    -Jsummariser.interval=10
)
set +e
# shellcheck disable=SC2086 # JVM_ARGS is split on purpose
java ${JVM_ARGS:--Xms256m -Xmx1g} \
    -Djmeter.home="$jmeter_home" \
    -Dcityhub.jmeter.timeout="$timeout_s" \
    -cp "$cache:$classpath" \
    JMeterLauncher -n -t "$plan" -l "$results" -j "$log" "${save[@]}" "$@"
rc=$?
set -e

# (d) did it run?
if [ $rc -ne 0 ]; then
    echo "run.sh: JMeter failed (exit $rc); log: $log" >&2
    exit $rc
fi
if [ ! -s "$results" ] || [ "$(wc -l < "$results")" -lt 2 ]; then
    echo "run.sh: JMeter wrote no sample to $results (wrong csv path? see $log)" >&2
    exit 1
fi
if grep -q "ERROR" "$log" 2>/dev/null; then
    echo "run.sh: note: $log has ERROR lines" >&2
fi
echo "run.sh: $(($(wc -l < "$results") - 1)) samples in $results (log: $log)"
