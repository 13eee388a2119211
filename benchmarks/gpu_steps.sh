# Sourced by the GPU-host batch scripts (benchmarks/*_gpu*.sh), after they set OUT and SUMMARY.
step() {  # step NAME LIMIT_S COMMAND...: run with a time limit, log to $OUT/NAME.log, record status and seconds
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
    local status=$?
    echo "$name: exit $status, $((SECONDS - start)) s (limit $limit s)" >>"$SUMMARY"
}
