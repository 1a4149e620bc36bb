# Sourced (not run) by scripts/demo.sh and tests/cli/mesh_call_http_test.sh:
# start_nghttpd DOCROOT starts nghttpd (Debian's nghttp2-server: an HTTP/2
# server over cleartext) serving DOCROOT on a free port of 127.0.0.1, adds
# its pid to the caller's `pids` array, and sets `address` to
# "127.0.0.1:PORT". It tries 20 ports at most; returns 1 if none worked.
start_nghttpd() {
  local docroot=$1 port pid
  for _ in $(seq 20); do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    nghttpd --no-tls -a 127.0.0.1 -d "$docroot" "$port" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 50); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        pids+=("$pid")
        address="127.0.0.1:$port"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$pid" 2>/dev/null || true
  done
  return 1
}
