# ensure_wrk.sh, sourced by floor.sh and loadtest.sh (which define log and
# die): ensure_wrk installs wrk with apt-get if it is missing, refreshing
# the package lists only when apt does not know the package yet.
ensure_wrk() {
  command -v wrk >/dev/null && return
  [ "$(id -u)" = 0 ] || die "wrk is missing; install it (apt-get install wrk) or run as root"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache show wrk >/dev/null 2>&1; then
    log "apt-get update"
    timeout 300 apt-get update -qq
  fi
  log "apt-get install -y wrk"
  timeout 300 apt-get install -y -qq wrk >/dev/null
  command -v wrk >/dev/null || die "wrk did not install"
}
