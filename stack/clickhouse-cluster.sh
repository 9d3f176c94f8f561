# ClickHouse as a cluster: CLICKHOUSE_SHARDS x CLICKHOUSE_REPLICAS servers and the ZooKeeper
# their replicated tables need. Sourced by lib.sh when either is above 1 (not run): up.sh,
# down.sh and status.sh then start, stop and check these servers with their own functions.
#
# Node i (0-based) is shard i / REPLICAS, replica i % REPLICAS, named clickhouse (i = 0) or
# clickhouse-i, with its state in $STACK_DIR/clickhouse (i = 0) or $STACK_DIR/clickhouse-i and its
# ports CLICKHOUSE_HTTP_PORT+i, CLICKHOUSE_TCP_PORT+i, CLICKHOUSE_INTERSERVER_PORT+i: node 0 is
# the single-node server, so a client that knows one address reaches it. Every node's config.xml
# is stack/clickhouse/config.xml.in rendered as for one server; its config.d/cluster.xml (written
# here) sets what differs: the cluster cpi2 in remote_servers (every node, internal_replication:
# a Distributed table writes each row to one replica of its shard and the replicated table copies
# it to the others), the macros {shard} and {replica}, the zookeeper section, and for i > 0 the
# ports, paths and log files. ZooKeeper is Debian's (package zookeeper), one standalone server on
# ZOOKEEPER_PORT, loopback only, state in $STACK_DIR/zookeeper.

CLICKHOUSE_SHARDS="${CLICKHOUSE_SHARDS:-1}"
CLICKHOUSE_REPLICAS="${CLICKHOUSE_REPLICAS:-1}"
ZOOKEEPER_PORT="${ZOOKEEPER_PORT:-2181}"
ZOOKEEPER_JAR="${ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}"
CLICKHOUSE_NODES=$((CLICKHOUSE_SHARDS * CLICKHOUSE_REPLICAS))

ch_node_name() { if [ "$1" -eq 0 ]; then echo clickhouse; else echo "clickhouse-$1"; fi; }
ch_node_dir() { echo "$STACK_DIR/$(ch_node_name "$1")"; }

# The cluster's servers beyond the single-node ones, in start order (down.sh stops them reversed).
CLICKHOUSE_CLUSTER_SERVERS="zookeeper"
for ((_i = 1; _i < CLICKHOUSE_NODES; _i++)); do
  CLICKHOUSE_CLUSTER_SERVERS="$CLICKHOUSE_CLUSTER_SERVERS $(ch_node_name "$_i")"
done
unset _i
SERVERS="$SERVERS $CLICKHOUSE_CLUSTER_SERVERS"

# Is ZooKeeper or ClickHouse node clickhouse-i answering? (lib.sh's healthy() asks here.)
cluster_healthy() {
  case "$1" in
    zookeeper)
      # srvr names the mode once the server serves sessions (ruok answers while it still loads)
      (exec 3<>"/dev/tcp/$STACK_HOST/$ZOOKEEPER_PORT" && echo srvr >&3 && cat <&3) 2>/dev/null | grep -q '^Mode: ' ;;
    clickhouse-[0-9]*)
      local i="${1#clickhouse-}"
      [ "$(curl -fsS --max-time 2 "http://$STACK_HOST:$((CLICKHOUSE_HTTP_PORT + i))/ping" 2>/dev/null)" = "Ok." ] ;;
    *) return 1 ;;
  esac
}

check_cluster_config() {
  local v
  for v in CLICKHOUSE_SHARDS CLICKHOUSE_REPLICAS; do
    [[ "${!v}" =~ ^[1-9][0-9]?$ ]] || die "$v='${!v}' in $STACK_ENV is not a count (1-99): fix it there"
  done
  [[ "$ZOOKEEPER_PORT" =~ ^[0-9]+$ ]] && [ "$ZOOKEEPER_PORT" -ge 1 ] && [ "$ZOOKEEPER_PORT" -le 65535 ] \
    || die "ZOOKEEPER_PORT='$ZOOKEEPER_PORT' in $STACK_ENV is not a port number (1-65535): fix it there"
  [ -f "$ZOOKEEPER_JAR" ] || die "ZooKeeper not found at $ZOOKEEPER_JAR: run make setup (Debian package zookeeper)"
}

# The remote_servers, macros and zookeeper sections of node $1 (plus, for i > 0, its own ports,
# paths and logs), as config.d/cluster.xml beside its config.xml.
ch_cluster_xml() {
  local i="$1" d s r n
  d="$(ch_node_dir "$i")"
  echo '<?xml version="1.0"?>'
  echo "<!-- Written by stack/clickhouse-cluster.sh: node $i of the cluster cpi2. -->"
  echo '<yandex>'
  if [ "$i" -gt 0 ]; then
    cat <<EOF
  <logger>
    <log>$LOG_DIR/$(ch_node_name "$i").log</log>
    <errorlog>$LOG_DIR/$(ch_node_name "$i").err.log</errorlog>
  </logger>
  <http_port>$((CLICKHOUSE_HTTP_PORT + i))</http_port>
  <tcp_port>$((CLICKHOUSE_TCP_PORT + i))</tcp_port>
  <interserver_http_port>$((CLICKHOUSE_INTERSERVER_PORT + i))</interserver_http_port>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
EOF
  fi
  echo "  <interserver_http_host>$STACK_HOST</interserver_http_host>"
  echo '  <remote_servers>'
  echo '    <cpi2>'
  for ((s = 0; s < CLICKHOUSE_SHARDS; s++)); do
    echo '      <shard>'
    echo '        <internal_replication>true</internal_replication>'
    for ((r = 0; r < CLICKHOUSE_REPLICAS; r++)); do
      n=$((s * CLICKHOUSE_REPLICAS + r))
      echo "        <replica><host>$STACK_HOST</host><port>$((CLICKHOUSE_TCP_PORT + n))</port></replica>"
    done
    echo '      </shard>'
  done
  echo '    </cpi2>'
  echo '  </remote_servers>'
  echo "  <macros><shard>$((i / CLICKHOUSE_REPLICAS))</shard><replica>$(ch_node_name "$i")</replica></macros>"
  cat <<EOF
  <zookeeper>
    <node><host>$STACK_HOST</host><port>$ZOOKEEPER_PORT</port></node>
    <session_timeout_ms>10000</session_timeout_ms>
  </zookeeper>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
</yandex>
EOF
}

start_zookeeper() {
  local d="$STACK_DIR/zookeeper" cp="$ZOOKEEPER_JAR"
  mkdir -p "$d/data"
  cat > "$d/zoo.cfg" <<EOF
# Written by stack/clickhouse-cluster.sh: one standalone ZooKeeper for the ClickHouse cluster.
tickTime=2000
dataDir=$d/data
clientPort=$ZOOKEEPER_PORT
clientPortAddress=$STACK_HOST
maxClientCnxns=200
admin.enableServer=false
4lw.commands.whitelist=srvr,mntr
autopurge.snapRetainCount=3
autopurge.purgeInterval=1
EOF
  [ -f /usr/share/java/slf4j-simple.jar ] && cp="$cp:/usr/share/java/slf4j-simple.jar"
  start zookeeper "$ZOOKEEPER_PORT" "$JAVA" -Xms128m -Xmx256m -Dorg.slf4j.simpleLogger.showDateTime=true \
    -cp "$cp" org.apache.zookeeper.server.ZooKeeperServerMain "$d/zoo.cfg"
}

# up.sh: ZooKeeper, then every ClickHouse node (node 0 by up.sh's start_clickhouse).
start_clickhouse_cluster() {
  local i d
  check_cluster_config
  start_zookeeper
  wait_for zookeeper 60
  for ((i = 0; i < CLICKHOUSE_NODES; i++)); do
    d="$(ch_node_dir "$i")"
    mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas" "$d/config.d"
    (umask 077; ch_cluster_xml "$i" > "$d/config.d/cluster.xml")
    if [ "$i" -eq 0 ]; then
      start_clickhouse
    else
      render "$STACK_SRC/clickhouse/config.xml.in" "$d/config.xml"
      cp "$STACK_SRC/clickhouse/users.xml" "$d/users.xml"
      start "$(ch_node_name "$i")" "$((CLICKHOUSE_HTTP_PORT + i))" \
        nice -n "$CLICKHOUSE_NICE" "$CLICKHOUSE_SERVER" --config-file="$d/config.xml"
    fi
  done
}

# up.sh: wait until every node beyond node 0 answers (up.sh waits for clickhouse itself).
wait_clickhouse_cluster() {
  local i
  for ((i = 1; i < CLICKHOUSE_NODES; i++)); do wait_for "$(ch_node_name "$i")" 60; done
}

# down.sh: after clickhouse, the other nodes and then ZooKeeper.
stop_clickhouse_cluster() {
  local s
  for s in $(echo "$CLICKHOUSE_CLUSTER_SERVERS" | tr ' ' '\n' | tac); do stop "$s"; done
}
