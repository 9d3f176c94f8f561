#!/usr/bin/env bash
# make-secrets.sh DIR CA_PATH SAN...: make what Kafka's authentication needs in DIR, once.
# Environment: KAFKA_SASL_LISTENERS, the broker's client listeners (default sasl_ssl).
#   ca.pem, ca.key          a throw-away certificate authority (10 years)
#   kafka-server.pem        the broker's private key and certificate signed by that CA, for
#                           ssl.keystore.type=PEM; subject alternative names SAN... (IP:127.0.0.1,
#                           DNS:localhost, DNS:kafka ...)
#   kafka-PRINCIPAL.properties  one client file per principal (admin and those of acls.conf, a
#                           {host} principal once per host of hosts.conf): librdkafka properties with
#                           a random password; CA_PATH is where the clients find ca.pem (DIR itself
#                           locally, the volume's mount point in a container). A host's agents'
#                           files also hold its signing key (cpi2.host, cpi2.host.key,
#                           cpi2.host.key.id); the simulated fleet's (collector, enforcer) the master
#   host-keys               the hosts' master signing key (ID=HEX; python/cpi2/hostauth.py): the
#                           detection job's --kafka.host-keys
#   server-sasl.properties  the broker's SASL settings made from those files (every run):
#                           the static PLAIN users, with admin on the controller listener too
# Files that exist are kept (a password is made once); a principal added to the list gets its
# file on the next run. DIR is 0700 and every file 0600: they hold private keys and passwords.
# Needs openssl. Used by stack/up.sh and by docker-compose's kafka-secrets service.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 DIR CA_PATH SAN..." >&2; exit 2; }
dir="$1" ca_path="$2"; shift 2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
umask 077
mkdir -p "$dir"
chmod 0700 "$dir"

if [ ! -f "$dir/ca.pem" ] || [ ! -f "$dir/ca.key" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=cpi2 local CA" \
    -keyout "$dir/ca.key.tmp" -out "$dir/ca.pem.tmp" 2>/dev/null
  mv "$dir/ca.key.tmp" "$dir/ca.key"
  mv "$dir/ca.pem.tmp" "$dir/ca.pem"
  rm -f "$dir/kafka-server.pem" # signed by an older CA
fi

if [ ! -f "$dir/kafka-server.pem" ]; then
  san="$(IFS=,; echo "$*")"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/server.key.tmp" 2>/dev/null
  openssl req -new -key "$dir/server.key.tmp" -subj "/CN=cpi2-kafka" -out "$dir/server.csr.tmp" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" > "$dir/server.ext.tmp"
  openssl x509 -req -in "$dir/server.csr.tmp" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 3650 -extfile "$dir/server.ext.tmp" -out "$dir/server.crt.tmp" 2>/dev/null
  cat "$dir/server.key.tmp" "$dir/server.crt.tmp" > "$dir/kafka-server.pem.tmp"
  mv "$dir/kafka-server.pem.tmp" "$dir/kafka-server.pem"
  rm -f "$dir"/server.*.tmp "$dir/ca.srl"
fi

# SASL PLAIN (over TLS; static users in server.properties) rather than SCRAM: admin, the broker's
# own user; and the principals whose clients use Debian 12's librdkafka 2.0.2 (the C agents, and
# ClickHouse 18.16, linked to it), whose SCRAM a Kafka 4 broker rejects (librdkafka appended its
# nonce twice until 2.6.1). With librdkafka 2.6.1 or newer they can move to SCRAM.
# The hosts' agents (collector-HOST, enforcer-HOST) are C agents too.
PLAIN_PRINCIPALS="admin collector enforcer clickhouse"

# The master of the hosts' signing keys, made once (rotation: stack/README.md).
if [ ! -f "$dir/host-keys" ]; then
  { echo "# The hosts' master signing keys, ID=HEX (make-secrets.sh): secret, keep it 0600."
    echo "1=$(openssl rand -hex 32)"; } > "$dir/host-keys.tmp"
  mv "$dir/host-keys.tmp" "$dir/host-keys"
fi
key_id="$(sed -n 's/^\([0-9][0-9]*\)=.*/\1/p' "$dir/host-keys" | tail -n 1)"
master="$(sed -n "s/^$key_id=//p" "$dir/host-keys" | tail -n 1)"
# host_key HOST: the host's own key, HMAC-SHA256(master, "cpi2 host key v1\0" HOST)
host_key() { printf 'cpi2 host key v1\0%s' "$1" | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$master" -r | cut -c1-64; }

hosts() { awk '!/^#/ && NF { print $1 }' "$here/hosts.conf" 2>/dev/null; }
principals() {
  echo admin
  awk '!/^#/ && NF { print $1 }' "$here/acls.conf" | grep -v '{host}' | sort -u
  for h in $(hosts); do
    awk '!/^#/ && NF { print $1 }' "$here/acls.conf" | grep '{host}' | sort -u | sed "s/{host}/$h/"
  done
}

principals | while read -r p; do
  f="$dir/kafka-$p.properties"
  if [ ! -f "$f" ]; then
    {
      echo "# Kafka client of principal $p (librdkafka properties; stack/kafka/make-secrets.sh)."
      echo "# Secret: keep it 0600. To rotate the password, see stack/README.md."
      echo "security.protocol=SASL_SSL"
      mech=SCRAM-SHA-512
      case " $PLAIN_PRINCIPALS " in *" $p "*) mech=PLAIN ;; esac
      case "$p" in collector-* | enforcer-*) mech=PLAIN ;; esac
      echo "sasl.mechanisms=$mech"
      echo "sasl.username=$p"
      echo "sasl.password=$(openssl rand -hex 24)"
      echo "ssl.ca.location=$ca_path"
    } > "$f.tmp"
    mv "$f.tmp" "$f"
  fi
  # what the agents sign with: a host's own key, or the simulated fleet's master (a file made
  # before the keys existed gets its lines now; a key made again after a rotation replaces them)
  case "$p" in
    collector | enforcer) want="cpi2.host.master=$master" ;;
    collector-* | enforcer-*) h="${p#*-}"; want="cpi2.host=$h"$'\n'"cpi2.host.key=$(host_key "$h")" ;;
    *) continue ;;
  esac
  if ! grep -qxF "cpi2.host.key.id=$key_id" "$f" || ! grep -qxF "${want##*$'\n'}" "$f"; then
    { grep -v '^cpi2\.host' "$f"; echo "cpi2.host.key.id=$key_id"; echo "$want"; } > "$f.tmp"
    chmod 0600 "$f.tmp"
    mv "$f.tmp" "$f"
  fi
done
# The broker's JAAS lines: admin (its own user) on the controller listener; on each client
# listener every PLAIN principal's password, and SCRAM (checked against the cluster metadata).
prop() { sed -n "s/^$2=//p" "$dir/kafka-$1.properties" | tail -n 1; }
plain='org.apache.kafka.common.security.plain.PlainLoginModule required'
admin="username=\"admin\" password=\"$(prop admin sasl.password)\""
users=""
for f in "$dir"/kafka-*.properties; do
  p="$(basename "$f" .properties)"; p="${p#kafka-}"
  [ "$(prop "$p" sasl.mechanisms 2>/dev/null)" = PLAIN ] && users="$users user_$p=\"$(prop "$p" sasl.password)\""
done
{
  echo "# made by stack/kafka/make-secrets.sh from the client files: do not edit"
  echo "listener.name.controller.plain.sasl.jaas.config=$plain $admin user_admin=\"$(prop admin sasl.password)\";"
  for l in ${KAFKA_SASL_LISTENERS:-sasl_ssl}; do
    echo "listener.name.$l.plain.sasl.jaas.config=$plain $admin$users;"
    echo "listener.name.$l.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
  done
} > "$dir/server-sasl.properties.tmp"
mv "$dir/server-sasl.properties.tmp" "$dir/server-sasl.properties"
chmod 0600 "$dir"/*
chmod 0644 "$dir/ca.pem" # a certificate: public
