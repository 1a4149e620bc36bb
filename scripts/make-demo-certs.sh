#!/usr/bin/env bash
# Makes a small PKI with the `openssl` command, for the demo's mutual TLS
# part and the TLS CLI test:
#
#   scripts/make-demo-certs.sh DIR IDENTITY
#
# In DIR: ca.pem (the CA; ca.key), and key/certificate pairs, EC P-256,
# valid for one day, signed by the CA:
#   server.pem/.key    a server whose certificate carries DNS:IDENTITY
#   impostor.pem/.key  a server of the same CA carrying DNS:impostor.IDENTITY
#   client.pem/.key    the calling workload, URI:spiffe://mesh.demo/ns/demo/sa/client
# A configuration of its own, so the system's openssl.cnf does not matter.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 DIR IDENTITY" >&2
  exit 2
fi
dir="$1"
identity="$2"
mkdir -p "$dir"
newkey=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
# Runs openssl quietly; on failure shows what it said, and stops.
quiet() {
  "$@" 2>"$dir/openssl.log" || {
    echo "make-demo-certs: $* failed:" >&2
    cat "$dir/openssl.log" >&2
    exit 1
  }
}
cat >"$dir/req.cnf" <<CNF
[req]
distinguished_name = dn
[dn]
[v3_ca]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
CNF
quiet openssl req -x509 -config "$dir/req.cnf" -extensions v3_ca -days 1 \
  "${newkey[@]}" -subj /CN=mesh-demo-ca -keyout "$dir/ca.key" \
  -out "$dir/ca.pem"

serial=16
leaf() {
  local name=$1 san=$2
  printf 'basicConstraints = CA:FALSE\nauthorityKeyIdentifier = keyid\nextendedKeyUsage = serverAuth,clientAuth\nsubjectAltName = %s\n' \
    "$san" >"$dir/$name.ext"
  quiet openssl req -new -config "$dir/req.cnf" "${newkey[@]}" -subj "/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr"
  quiet openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -set_serial "$serial" -days 1 -extfile "$dir/$name.ext" \
    -out "$dir/$name.pem"
  serial=$((serial + 1))
  rm -f "$dir/$name.csr" "$dir/$name.ext"
}
leaf server "DNS:$identity"
leaf impostor "DNS:impostor.$identity"
leaf client "URI:spiffe://mesh.demo/ns/demo/sa/client"
rm -f "$dir/req.cnf" "$dir/openssl.log"
